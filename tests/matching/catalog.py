"""The catalog's message templates and rendered examples, shared by the matching tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CATALOG_PATH = Path(__file__).with_name("catalog_messages.json")
CATALOG: list[dict[str, Any]] = json.loads(CATALOG_PATH.read_text())["constraints"]
WORDED = [rule for rule in CATALOG if rule["template"]]
EXAMPLES = [
    (rule["rule_id"], rule["template"], example["text"], example["captures"])
    for rule in WORDED
    for example in rule["rendered_examples"]
]
