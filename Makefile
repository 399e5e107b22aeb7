# clrevents: the .NET runtime's event stream for Go.
GO ?= go

.PHONY: all build generate check-generate test test-short bench bench-peer bench-smoke fuzz vet demo

all: check-generate vet test

build:
	$(GO) build ./...

# Regenerate clrevents/*_gen.go from schema/clr.yaml and schema/overrides.yaml,
# and kernelevents/*_gen.go from schema/kernel.yaml.
generate:
	$(GO) generate ./...

# Regenerate, then fail if anything generated differs from what is committed.
check-generate: generate
	@git diff --exit-code --stat -- clrevents kernelevents || (echo "stale generated files: commit the output of make generate" >&2; exit 1)
	@test -z "$$(git ls-files --others --exclude-standard -- clrevents kernelevents)" || (echo "untracked generated files in clrevents or kernelevents:" >&2; git ls-files --others --exclude-standard -- clrevents kernelevents >&2; exit 1)

vet:
	$(GO) vet ./...

# The test command CI runs (see README and .ci/run).
test:
	$(GO) test ./...

test-short:
	$(GO) test -short ./...

bench:
	GO=$(GO) sh bench/run

# Issue 27's ratios against the Go peer, pyroscope-io/dotnetdiag, both
# readers in one binary (bench/peer, a module of its own; see
# BENCHMARKS.md). PEERFLAGS passes flags, e.g. PEERFLAGS='-rounds 31'.
bench-peer:
	cd bench/peer && $(GO) run . $(PEERFLAGS)

# Every benchmark once: a benchmark that fails or panics is caught in CI, not
# the next time someone measures.
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

# A short smoke run of every fuzz target. The budget is a count of
# executions, not a duration: with a duration, go1.26's fuzz coordinator can
# report a spurious "context deadline exceeded" when a starved worker misses
# the deadline (golang/go#75804, fixed in go1.27). FUZZTIME=30s still works.
FUZZTIME ?= 20000x
# Minimizing a new input costs as many runs of the target: bounded by a
# count too, so that a slow target (internal/damagetest's FuzzLayers runs
# every layer, about 2 ms a run) does not spend minutes on each.
FUZZMINIMIZE ?= 200x
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg; \
		done; \
	done

# The README's first command: the CPU profile of a small real trace shipped in testdata.
demo:
	$(GO) run ./cmd/clrdump -profile cpu testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
