"""Print the prompt check's figures on both halves of the promptcheck48 corpora (flag items flagged, pass items
flagged, items given a blocking issue of another kind): ``python tests/scripts/prompt_corpora.py``."""

from __future__ import annotations

from pathlib import Path

import yaml

from memopt.data.source import load_data
from memopt.export.check import TrainingData, check_prompt

CORPORA = Path(__file__).resolve().parents[1] / "fixtures" / "promptcheck48"


def main() -> None:
    data = TrainingData.of(load_data(str(CORPORA / "train.json"))[1])
    for half in ("tune", "heldout"):
        for kind in ("injection", "leakage", "contradiction"):
            items = yaml.safe_load((CORPORA / half / f"{kind}.yaml").read_text(encoding="utf-8"))
            found = {i["id"]: check_prompt(i["operation"], i["operation"], i["prompt"], data=data) for i in items}
            flags = [i["id"] for i in items if i["expect"] == "flag"]
            passes = [i["id"] for i in items if i["expect"] == "pass"]
            flagged = [i for i in flags if any(x.kind == kind for x in found[i])]
            wrongly = [i for i in passes if any(x.kind == kind for x in found[i])]
            other = [i for i, issues in found.items() if any(x.blocking and x.kind != kind for x in issues)]
            print(f"{half:8s} {kind:14s} flag items flagged {len(flagged)}/{len(flags)} "
                  f"({len(flagged) / len(flags):.0%}), pass items flagged {len(wrongly)}/{len(passes)} "
                  f"({len(wrongly) / len(passes):.0%}), blocking of another kind: {len(other)}")


if __name__ == "__main__":
    main()
