# Two commands do everything: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.gis_sw-installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# bytecode written once, even where PYTHONDONTWRITEBYTECODE is set (every cold run compiled ~100 modules)
	$(BIN)/python -m compileall -q gis_sw
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gis-sw check data/sample/proposals.gpkg --layers data/sample/layers.toml --out out/demo --overwrite --fail-on never
	@echo "Open out/demo/index.html: every application with its verdict, its report.pdf, its sheets and the web map."

lint: $(STAMP)
	$(BIN)/ruff check gis_sw tests benchmarks tools
	$(BIN)/ruff format --check gis_sw tests benchmarks tools
	$(BIN)/mypy

test: $(STAMP) lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	nice -n 5 $(BIN)/python benchmarks/report.py $(BENCH_ARGS)

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache
