"""What runs inside a job process (and the template it is forked from): the job body
(:mod:`.body`), its session setup (:mod:`.setup`), training and finalisation (:mod:`.training`),
the recorder of its curve, events and states (:mod:`.recorder`), the measurements
(:mod:`.measure`), the loading of its problem (:mod:`.problem`), its integrity audit
(:mod:`.audit`) and the template's preloads (:mod:`.template`, :mod:`.template_openai`, :mod:`.template_real`).

The driver (the modules of ``trace_bench.runner`` beside this package) never imports it: it names
the body for the executor (``JOB_BODY``) and the template for the local pool by module path.  This
package imports the trainers, the tasks and ``opto``; the driver imports none of them."""

from __future__ import annotations

from trace_bench._util.relocated import relocated_getattr

__getattr__ = relocated_getattr(__name__)
