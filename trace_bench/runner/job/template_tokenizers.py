"""What the job template of a real run on OpenAI's API adds: the models' tokenizers.

Each call reserves its worst case against the budget, counting its prompt with the model's own
tokenizer where one is at hand (:mod:`trace_bench.llm.tokenizers`).  Loading ``tiktoken``'s
``o200k_base`` and ``cl100k_base`` costs 0.2-0.5 s each, which every job's first call paid; here it is
paid once, and the forked jobs share the tables.
"""

from __future__ import annotations

import gc

from trace_bench.llm.tokenizers import preload_tokenizers

preload_tokenizers()
gc.collect()
gc.freeze()
