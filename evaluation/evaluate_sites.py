"""`make eval-sites`: one rule's reach over a whole corpus, against a reference set of sites
read from the code (each set's README says how, and that it was written without the tool).

Sets (evaluation/groundtruth/<set>/sites.tsv, columns `file line ...`):
  timm_conv_bn                      timm 1.0.31's literal Conv2d -> BatchNorm2d; a site is its
                                    conv's construction line, found when a conv_batchnorm
                                    match has it among its `init_lines`. The set covers
                                    literal BatchNorm2d only, so matches outside it (a class
                                    passed as a parameter) are not counted against it.
  transformers5_dropout_layernorm   transformers 5.23.0's fusable Dropout -> add -> LayerNorm;
                                    a site is its dropout call's line, found when a
                                    dropout_layernorm match starts there. The set claims
                                    every site of the corpus, so a match elsewhere is a false
                                    positive (or a row the readers missed: read it, then log it).
Scans each corpus cold, writes build/eval-sites/<set>/{matches.jsonl,sites.tsv,extra.tsv} and
prints recall (and precision where the set is complete).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text

GROUNDTRUTH = Path(__file__).resolve().parent / "groundtruth"


@dataclass(frozen=True)
class SiteSet:
    corpus: str  # below the corpora folder
    folder: str  # scanned, below the corpus
    rule: str
    by_init_lines: bool  # a site is a construction line (else the match's first line)
    complete: bool  # every site of the corpus is listed: other matches are false positives


SETS = {
    "timm_conv_bn": SiteSet("timm-1.0.31", "timm/models", "conv_batchnorm", True, False),
    "transformers5_dropout_layernorm": SiteSet("transformers-5.23.0", "transformers/models", "dropout_layernorm",
                                               False, True),
}


def match_lines(matches: Path, root: Path, site_set: SiteSet) -> list[tuple[str, int]]:
    """(path below the corpus, line) of every match of the set's rule, as the set keys a site."""
    out = []
    for line in matches.read_text().splitlines():
        record = json.loads(line) if line.strip() else None
        if record is None or record["rule"] != site_set.rule:
            continue
        path = Path(record["file"]).resolve().relative_to(root.resolve()).as_posix()
        lines = record["init_lines"] if site_set.by_init_lines else [record["line"]]
        out += [(path, int(n)) for n in lines]
    return out


def score(name: str, site_set: SiteSet, corpora: Path, out: Path) -> None:
    root = corpora / site_set.corpus
    if not (root / site_set.folder).is_dir():
        raise SystemExit(f"{root / site_set.folder}: error: not fetched (run `make zoo-modern`)")
    out.mkdir(parents=True, exist_ok=True)
    matches = out / "matches.jsonl"
    subprocess.run([sys.executable, "-m", "adopter", "scan", str(root / site_set.folder), "-r", site_set.rule,
                    "--format", "jsonl", "-o", str(matches), "--no-cache", "--module-root", str(root)], check=False)
    sites = pd.read_csv(GROUNDTRUTH / name / "sites.tsv", sep="\t")
    found = match_lines(matches, root, site_set)
    sites["found"] = [int((path, line) in set(found)) for path, line in zip(sites["file"], sites["line"])]
    atomic_write_text(out / "sites.tsv", sites.to_csv(sep="\t", index=False))
    print(f"{name} ({site_set.rule}): {sites['found'].sum()} of {len(sites)} sites found "
          f"(recall {sites['found'].mean():.3f}); {out}/sites.tsv")
    if "shape" in sites:
        for shape, row in sites.groupby("shape")["found"].agg(["sum", "count"]).iterrows():
            print(f"  {shape}: {row['sum']} of {row['count']}")
    for _, site in sites[sites["found"] == 0].iterrows():
        print(f"  missed {site['file']}:{site['line']} {site['class_or_function']}")
    if site_set.complete and not site_set.by_init_lines:
        listed = set(zip(sites["file"], sites["line"]))
        extra = sorted(set(found) - listed)
        atomic_write_text(out / "extra.tsv", pd.DataFrame(extra, columns=["file", "line"]).to_csv(sep="\t", index=False))
        hits = sum(1 for key in found if key in listed)
        print(f"  precision {hits / len(found) if found else 1.0:.3f} ({len(found) - hits} of {len(found)} matches "
              f"at no listed site; {out}/extra.tsv)")
        for path, line in extra:
            print(f"  extra {path}:{line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=Path("modern_models"))
    parser.add_argument("--out", type=Path, default=Path("build/eval-sites"))
    parser.add_argument("--set", choices=sorted(SETS), action="append", help="a reference set (default: all)")
    args = parser.parse_args(argv)
    for name in args.set or sorted(SETS):
        score(name, SETS[name], args.corpora, args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
