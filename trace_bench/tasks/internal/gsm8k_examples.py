"""Ten grade-school word problems in GSM8K's row schema (``question``, ``answer`` ending ``#### n``).

Written for trace-bench (not GSM8K items): the fallback of ``internal:multiobjective_gsm8k`` when no
GSM8K rows are available offline, as the original task had one.  A problem's metadata says when
these were used, so they are never mistaken for GSM8K results.
"""

from __future__ import annotations

EXAMPLES: tuple[dict[str, str], ...] = (
    {"question": "A baker makes 36 muffins and sells a third of them before noon. How many muffins are left?",
     "answer": "She sells 36 / 3 = 12 muffins.\n36 - 12 = 24 muffins are left.\n#### 24"},
    {"question": "Tom reads 15 pages every evening. How many pages does he read in 2 weeks?",
     "answer": "Two weeks have 14 evenings.\n15 * 14 = 210 pages.\n#### 210"},
    {"question": "A bus has 48 seats. 29 passengers are on it and 11 more get on. How many seats are empty?",
     "answer": "29 + 11 = 40 passengers.\n48 - 40 = 8 seats are empty.\n#### 8"},
    {"question": "Maya buys 4 notebooks at $3 each and a pen for $2. She pays with a $20 bill. "
                 "How much change does she get?",
     "answer": "The notebooks cost 4 * 3 = $12.\nIn total she spends 12 + 2 = $14.\n20 - 14 = $6.\n#### 6"},
    {"question": "A garden has 7 rows of tulips with 9 tulips in each row, and 5 extra tulips by the gate. "
                 "How many tulips are there?",
     "answer": "7 * 9 = 63 tulips in rows.\n63 + 5 = 68 tulips.\n#### 68"},
    {"question": "A train travels 120 km in 2 hours. At the same speed, how far does it travel in 5 hours?",
     "answer": "Its speed is 120 / 2 = 60 km per hour.\n60 * 5 = 300 km.\n#### 300"},
    {"question": "Leo has 3 times as many stickers as Ana. Ana has 14 stickers. "
                 "How many stickers do they have together?",
     "answer": "Leo has 3 * 14 = 42 stickers.\n42 + 14 = 56 stickers.\n#### 56"},
    {"question": "A shop had 250 apples. It sold 85 on Monday and 60 on Tuesday. How many apples remain?",
     "answer": "It sold 85 + 60 = 145 apples.\n250 - 145 = 105 apples remain.\n#### 105"},
    {"question": "Sam saves $5 each week. How many weeks does he need to save $65?",
     "answer": "65 / 5 = 13 weeks.\n#### 13"},
    {"question": "A rectangle is 12 m long and 7 m wide. What is its perimeter in meters?",
     "answer": "2 * (12 + 7) = 2 * 19 = 38 m.\n#### 38"},
)
