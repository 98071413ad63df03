# Adopter: `make setup facts match` installs everything and runs the main job on the zoo;
# `make test` runs the tests. Every target is safe to re-run.
PYTHON ?= python3
VENV   := .venv
VERIFY_VENV := .venv-verify
VERIFY5_VENV := .venv-verify5
VERIFY_DEV_VENV := .venv-verify-dev
BIN    := $(VENV)/bin
ADOPTER := $(BIN)/adopter
ZOO    := hf_models

.PHONY: setup zoo zoo-modern zoo-dev facts match patch patch-torch verify verify-torch eval eval-modern eval-dev eval-sites gate gate-modern gate-dev timing report bench bench-scale bench-bigfile bench-fixed profile clingo-debug bench-models bench-gpu verify-setup verify5-setup verify-dev-setup patch-modern verify-modern patch-dev verify-dev verify-harness catalogue test-verify test test-all clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements.lock kernels/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	@# the kernels' distribution (kernels/): the analysis never imports it, import-linter reads it
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e ./kernels
	@# byte-compiled as `pip install .` leaves it: an editable install is not, and where
	@# PYTHONDONTWRITEBYTECODE is set no import writes it, so every command would compile ~40 modules
	$(BIN)/python -m compileall -q adopter > /dev/null
	touch $@

# The 199 model files of the paper, from pinned transformers wheels; checked against MANIFEST.tsv.
zoo: setup
	$(BIN)/python -m evaluation.zoo --dest $(ZOO)

# Model sources of transformers 5.23.0 (and 4.46.3), timm 1.0.31 and diffusers 0.42.1 from pinned
# wheels, checked against evaluation/modern/MANIFEST.tsv.
zoo-modern: setup
	$(BIN)/python -m evaluation.zoo_modern --dest modern_models

# The development corpus (issue 50): model code of litgpt 0.5.13, torchtitan 0.3.0, torchvision
# 0.29.1 and x-transformers 2.31.10 from pinned wheels, checked against evaluation/dev/MANIFEST.tsv.
zoo-dev: setup
	$(BIN)/python -m evaluation.zoo_dev --dest dev_models

$(ZOO)/modeling_bert.py $(ZOO)/MODULES.tsv:
	$(MAKE) zoo

# Extract fact tables for the zoo and run the Datalog core on every file.
# (the zoo's files are named as the modules they are in transformers: hf_models/MODULES.tsv, from
# make zoo; the bundled rules run too, so that make match finds their matches in the cache)
facts: setup $(ZOO)/modeling_bert.py $(ZOO)/MODULES.tsv
	$(ADOPTER) facts $(ZOO) --out build/facts --module-map $(ZOO)/MODULES.tsv --rules paper --rules modern

# Scan the zoo with every bundled rule.
match: setup $(ZOO)/modeling_bert.py $(ZOO)/MODULES.tsv
	$(ADOPTER) scan $(ZOO) --format jsonl -o build/matches.jsonl --module-map $(ZOO)/MODULES.tsv

# Precision/recall against the ground truth and the paper's counts, the ast-grep
# baseline, and the ablations (Table 2 and 3 shapes), all under build/eval/.
eval: match
	$(BIN)/python -m evaluation.evaluate --ablations
	$(BIN)/python -m evaluation.astgrep_baseline.run

# Precision/recall per rule and corpus on the modern sample (make zoo-modern), against the
# ground truth written by reading it (evaluation/groundtruth/modern/), under build/eval-modern/.
eval-modern: setup
	$(BIN)/python -m evaluation.evaluate_modern --corpora modern_models

# Precision/recall per family and corpus on the development corpus (make zoo-dev), over every
# spelling, against the ground truth read from it (evaluation/groundtruth/dev/), under build/eval-dev/.
eval-dev: setup
	$(BIN)/python -m evaluation.evaluate_dev --corpora dev_models

# The same on the development corpus (needs make zoo-dev): floors in evaluation/baseline_dev.tsv.
gate-dev: eval-dev
	$(BIN)/python -m evaluation.gate --summary build/eval-dev/summary.tsv --floor evaluation/baseline_dev.tsv

# One rule's reach over a whole corpus against a reference set read from the code: timm 1.0.31's
# literal Conv2d -> BatchNorm2d, transformers 5.23.0's Dropout -> add -> LayerNorm (build/eval-sites/).
eval-sites: setup
	$(BIN)/python -m evaluation.evaluate_sites

# The CI gate: no rule below the committed floor evaluation/baseline.tsv. It scans first (the
# result cache answers at once where neither the zoo nor the code changed): a build/matches.jsonl
# of older code would score that code.
gate: match
	$(BIN)/python -m evaluation.evaluate
	$(BIN)/python -m evaluation.gate

# The same on the modern sample (needs make zoo-modern): floors in evaluation/baseline_modern.tsv.
gate-modern: eval-modern
	$(BIN)/python -m evaluation.gate --summary build/eval-modern/summary.tsv --floor evaluation/baseline_modern.tsv

# Analysis time per (model, rule), Table 4 shape (build/eval/timing.tsv).
timing: setup $(ZOO)/modeling_bert.py
	$(BIN)/python -m evaluation.timing

# build/report/index.md: the four experiments beside the paper's figures, with plots.
report: setup
	test -f build/eval/ablation.tsv || $(MAKE) eval
	test -f build/eval/timing.tsv || $(MAKE) timing
	$(BIN)/python -m evaluation.report

build/matches.jsonl:
	$(MAKE) match

# Speed and memory of the main path, measured in one run (build/bench/bench.tsv).
bench: setup $(ZOO)/modeling_bert.py
	$(BIN)/python -m evaluation.bench.run

# Where the cold analysis goes, stage by stage, on every 5th zoo file (build/bench/profile.tsv).
profile: setup $(ZOO)/modeling_bert.py
	$(BIN)/python -m evaluation.bench.profile

# The pinned clingo built from source with symbols and per-predicate lookup counts, for
# finding where grounding goes (build/clingo-debug/site; docs/performance.md).
clingo-debug: setup
	bash evaluation/bench/clingo/build.sh

# Scale curve: cold scan time and memory from 1 file to 566 (build/bench/scale.{tsv,png}).
bench-scale: setup $(ZOO)/modeling_bert.py
	$(BIN)/python -m evaluation.bench.scale

# What grounding costs every file before its facts: a one-line file in forked workers, for the
# analyses, + the match programs, + the compiled rules (build/bench/fixed.tsv).
bench-fixed: setup
	$(BIN)/python -m evaluation.bench.fixed_cost

# Per-file cost: one large generated file (many classes, one long forward, many functions;
# 5,000 to 50,000 lines) scanned cold and alone, per MB next to the zoo's (build/bench/bigfile.tsv).
bench-bigfile: setup $(ZOO)/modeling_bert.py
	$(BIN)/python -m evaluation.bench.per_file

# Differential verification runs models, so it has its own venv: torch (CPU) + transformers.
verify-setup: $(VERIFY_VENV)/.installed

# Liger-Kernel goes in without its dependencies (no Triton beside the CPU torch: the tests see
# the library installed and its kernels unavailable, so the PyTorch fallback runs).
$(VERIFY_VENV)/.installed: evaluation/verify/requirements-verify.lock evaluation/verify/requirements-liger.lock kernels/pyproject.toml
	$(PYTHON) -m venv $(VERIFY_VENV)
	$(VERIFY_VENV)/bin/pip install --quiet --disable-pip-version-check -r evaluation/verify/requirements-verify.lock
	$(VERIFY_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r evaluation/verify/requirements-liger.lock
	$(VERIFY_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e ./kernels
	touch $@

# The second verification environment, for today's code: torch (CPU) + transformers 5.23.0, pinned
# in its own lock; .venv-verify (transformers 4.34.0, the zoo) is not touched.
verify5-setup: $(VERIFY5_VENV)/.installed

$(VERIFY5_VENV)/.installed: evaluation/verify/requirements-verify5.lock kernels/pyproject.toml
	$(PYTHON) -m venv $(VERIFY5_VENV)
	$(VERIFY5_VENV)/bin/pip install --quiet --disable-pip-version-check -r evaluation/verify/requirements-verify5.lock
	$(VERIFY5_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e ./kernels
	touch $@

# The environment for the development corpus's models (make verify-dev): torch (CPU) and the pinned
# support packages of the four codebases, all of requirements-verify-dev.lock installed without resolving.
verify-dev-setup: $(VERIFY_DEV_VENV)/.installed

$(VERIFY_DEV_VENV)/.installed: evaluation/verify/requirements-verify-dev.lock kernels/pyproject.toml
	$(PYTHON) -m venv $(VERIFY_DEV_VENV)
	$(VERIFY_DEV_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -r evaluation/verify/requirements-verify-dev.lock
	$(VERIFY_DEV_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e ./kernels
	touch $@

# Patch the zoo once per rule and once with all rules: build/patched/<set>/ and
# build/patches/<set>/ (one .diff per patched file, patches.tsv: applied and refused matches).
patch: setup $(ZOO)/modeling_bert.py
	$(BIN)/python -m evaluation.patch_zoo

# The same with the `torch` kernel set (targets that run with PyTorch alone, adopter/rewrite/kernel_sets.py):
# build/patched-torch/<set>/, build/patches-torch/<set>/.
patch-torch: setup $(ZOO)/modeling_bert.py
	$(BIN)/python -m evaluation.patch_zoo --kernels torch

MODERN_CORPUS := transformers-5.23.0
MODERN_DIFFUSERS := diffusers-0.42.1

modern_models/$(MODERN_CORPUS)/transformers/models/llama/modeling_llama.py:
	$(MAKE) zoo-modern

# The modern sample's transformers 5.23.0 files patched once per rule and once with all rules,
# `torch` kernels: build/patched-modern/<set>/transformers/models/<package>/modeling_<m>.py (the
# wheel's layout), build/patches-modern/<set>/ (diffs, patches.tsv); its diffusers 0.42.1 files
# likewise under build/patched-modern-diffusers/ and build/patches-modern-diffusers/.
patch-modern: setup modern_models/$(MODERN_CORPUS)/transformers/models/llama/modeling_llama.py
	$(BIN)/python -m evaluation.patch_zoo --kernels torch --modern $(MODERN_CORPUS)
	$(BIN)/python -m evaluation.patch_zoo --kernels torch --modern $(MODERN_DIFFUSERS) \
		--patched build/patched-modern-diffusers --patches build/patches-modern-diffusers

# Every patched file run against its original (tiny random models, same weights, eval mode):
# build/verify/summary.tsv, per rule: patches verified failed not_instantiable not_exercised.
verify: verify-setup
	@test -f build/patches/all/patches.tsv || $(MAKE) patch
	$(VERIFY_VENV)/bin/python -m evaluation.verify.patches

verify-torch: verify-setup
	@test -f build/patches-torch/all/patches.tsv || $(MAKE) patch-torch
	$(VERIFY_VENV)/bin/python -m evaluation.verify.patches --patched build/patched-torch --patches build/patches-torch --out build/verify-torch

# What the `torch` kernel set buys on the paper's nine models and three modern ones (Llama, Qwen2,
# Mistral from transformers 5.23.0): training throughput, peak memory and inference latency per
# variant (vanilla, each rule, all rules, the `default` set, torch.compile of vanilla and of
# default), small sizes on CPU (build/bench/models.tsv) or base sizes on CUDA (models_gpu.tsv).
# The nine run in BENCH_PYTHON (transformers 4.34.0), the three in BENCH5_PYTHON (5.23.0).
BENCH_MODELS := bert,roberta,albert,distilbert,gpt2,gpt_neo,t5,groupvit,resnet
BENCH_MODERN_SAMPLE := evaluation/bench/modern_models.tsv
BENCH_PYTHON ?= $(VERIFY_VENV)/bin/python
BENCH5_PYTHON ?= $(VERIFY5_VENV)/bin/python
# Each variant runs BENCH_REPEATS times in alternating order, in fresh interpreters; the medians are kept.
BENCH_REPEATS ?= 3
# e.g. make bench-gpu BENCH_ARGS='--models bert,gpt2' (BENCH_ARGS come last, so '--repeats 1' there wins)
BENCH_ARGS ?=
# (the `default` targets are their patches.tsv: a model the set leaves unchanged gets no copy)
BENCH_PATCHED := build/patched-torch/all/modeling_bert.py build/patches-default/all/patches.tsv \
	build/patched-bench-modern/torch/all/transformers/models/llama/modeling_llama.py \
	build/patches-bench-modern/default/all/patches.tsv

build/patched-torch/all/modeling_bert.py:
	$(BIN)/python -m evaluation.patch_zoo --kernels torch --models $(BENCH_MODELS)

# The `default` set (what `adopter apply` emits) leaves most of the nine unchanged: no copy for those.
build/patches-default/all/patches.tsv:
	$(BIN)/python -m evaluation.patch_zoo --kernels default --models $(BENCH_MODELS)

build/patched-bench-modern/torch/all/transformers/models/llama/modeling_llama.py: $(BENCH_MODERN_SAMPLE) modern_models/$(MODERN_CORPUS)/transformers/models/llama/modeling_llama.py
	$(BIN)/python -m evaluation.patch_zoo --kernels torch --modern $(MODERN_CORPUS) --sample $(BENCH_MODERN_SAMPLE) \
		--patched build/patched-bench-modern/torch --patches build/patches-bench-modern/torch

# The `default` set leaves the three unchanged today (every rule that matches them is left out),
# so this writes no copy, only its patches.tsv (the refusals and their reasons).
build/patches-bench-modern/default/all/patches.tsv: $(BENCH_MODERN_SAMPLE) modern_models/$(MODERN_CORPUS)/transformers/models/llama/modeling_llama.py
	$(BIN)/python -m evaluation.patch_zoo --kernels default --modern $(MODERN_CORPUS) --sample $(BENCH_MODERN_SAMPLE) \
		--patched build/patched-bench-modern/default --patches build/patches-bench-modern/default

bench-models: setup verify-setup verify5-setup $(BENCH_PATCHED)
	$(BENCH_PYTHON) -m evaluation.bench.models --device cpu --modern-python $(BENCH5_PYTHON) --repeats $(BENCH_REPEATS) $(BENCH_ARGS)
	$(BIN)/python -m evaluation.bench.plot_models build/bench/models_summary.tsv

# On a machine without CUDA this says so and exits 0. On a CUDA machine, point BENCH_PYTHON and
# BENCH5_PYTHON at environments with a CUDA torch (transformers 4.34.0 and 5.23.0 respectively).
bench-gpu: setup verify-setup verify5-setup $(BENCH_PATCHED)
	$(BENCH_PYTHON) -m evaluation.bench.models --device cuda --modern-python $(BENCH5_PYTHON) --repeats $(BENCH_REPEATS) $(BENCH_ARGS)
	@if [ -f build/bench/models_gpu_summary.tsv ]; then $(BIN)/python -m evaluation.bench.plot_models build/bench/models_gpu_summary.tsv; fi

# The verification harness on every zoo model against itself (build/verify/instantiable.tsv):
# groundwork for `make verify` of patched files.
verify-harness: verify-setup $(ZOO)/modeling_bert.py
	$(VERIFY_VENV)/bin/python -m evaluation.verify.harness

# Every patch of the modern sample (make patch-modern) run against its original in .venv-verify5
# (transformers 5.23.0), outputs and gradients: build/verify-modern/summary.tsv, as for the zoo;
# its diffusers files' patches (diffusers 0.42.1, tiny models named in the verifier):
# build/verify-modern/diffusers_summary.tsv.
verify-modern: verify5-setup
	@test -f build/patches-modern-diffusers/all/patches.tsv || $(MAKE) patch-modern
	$(VERIFY5_VENV)/bin/python -m evaluation.verify.patches --modern $(MODERN_CORPUS)
	$(VERIFY5_VENV)/bin/python -m evaluation.verify.diffusers_sample

DEV_CORPORA := litgpt-0.5.13 torchtitan-0.3.0 torchvision-0.29.1 x-transformers-2.31.10

dev_models/x-transformers-2.31.10/x_transformers/x_transformers.py:
	$(MAKE) zoo-dev

# The development corpus patched with the `torch` kernels, each codebase once per rule and once with
# all rules: build/patched-dev/<codebase>/<set>/<path>, build/patches-dev/<codebase>/<set>/ (diffs, patches.tsv).
patch-dev: setup dev_models/x-transformers-2.31.10/x_transformers/x_transformers.py
	for c in $(DEV_CORPORA); do $(BIN)/python -m evaluation.patch_zoo --kernels torch --dev $$c || exit 1; done

# Every patched file of the development corpus run against its original in tiny models named in
# evaluation/verify/dev_corpus.py, eval and train mode, outputs and gradients:
# build/verify-dev/summary.tsv (per codebase, model, patched file) and files.tsv (per patched file).
verify-dev: verify-dev-setup patch-dev
	$(VERIFY_DEV_VENV)/bin/python -m evaluation.verify.dev_corpus

# The torch names rules may use, with their kinds (adopter/catalogue/torch.tsv, committed), from the pinned torch.
catalogue: verify-setup
	$(VERIFY_VENV)/bin/python -m evaluation.torch_catalogue

# ... and, in .venv-verify5, the harness on today's code (the modern sample, transformers 5.23.0);
# in .venv-verify-dev, the development corpus's patches (about 3 minutes).
test-verify: verify-setup verify5-setup verify-dev-setup setup $(ZOO)/modeling_bert.py modern_models/$(MODERN_CORPUS)/transformers/models/llama/modeling_llama.py dev_models/x-transformers-2.31.10/x_transformers/x_transformers.py
	$(VERIFY_VENV)/bin/python -m pytest -q --noconftest tests/evaluation/test_verify_harness.py tests/kernels/test_kernels.py tests/kernels/test_kernels_attention.py tests/kernels/test_kernels_library.py tests/kernels/test_kernels_compile.py tests/rules/test_torch_catalogue.py
	$(VERIFY5_VENV)/bin/python -m pytest -q --noconftest tests/evaluation/test_verify_modern.py tests/evaluation/test_verify_diffusers.py
	ADOPTER_REQUIRE_ZOO=1 $(VERIFY_DEV_VENV)/bin/python -m pytest -q --noconftest tests/evaluation/test_verify_dev.py

# The fast tier: every layer's tests and a few zoo files, in as many workers as there are cores
# (at most 4); --durations shows where its time goes.
PYTEST := $(BIN)/python -m pytest -q -n auto --maxprocesses 4 --durations=15
test: setup
	$(PYTEST)

# Every tier (CI): the fast one, the whole-corpus tests (`corpus` marker: needs make zoo
# zoo-modern), the tests that run in the verification environments (`venv`), and test-verify.
test-all: setup zoo zoo-modern test-verify
	ADOPTER_REQUIRE_ZOO=1 $(PYTEST) -m ""

clean:
	rm -rf build
