# shoal: the two set-up commands are `make demo` and `make test`; each runs
# the dependency script and the build first, so either alone works on a
# fresh Debian 12 machine.
BUILD_DIR ?= build
JOBS ?= 2
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=

ARM64_BUILD_DIR ?= build-arm64
WORKER_BUILD_DIR ?= build-worker

.PHONY: deps test-deps build test test-sweep demo bench docs-check fuzz clean format \
	worker-arm64 arm64 test-arm64 deb deb-worker deb-worker-arm64 deb-arm64

deps:
	bash scripts/install-deps.sh

test-deps:
	bash scripts/install-deps.sh --with-test-deps

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

# The shoal binary alone (and the modules it loads): `make demo` starts
# without compiling the tests first; `make test` builds everything.
build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target shoal

# Every test but the full sweeps (docs/testing.md), which `make test-sweep`
# runs, and the whole of shoal cross-built for arm64, which `make
# test-arm64` runs (its cold build is longer than CI can spare).
SWEEPS = ^CoverageSweep/
ARM64_SHOAL = ^Arm64Shoal

test: test-deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600 \
	  -E '$(SWEEPS)|$(ARM64_SHOAL)'

test-sweep: test-deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600 \
	  -R '$(SWEEPS)'

demo: build
	./$(BUILD_DIR)/shoal demo

bench: build
	bash bench/run_all.sh --all

# Every build/shoal example of README and docs/ run in order; fails naming
# each that exits non-zero (scripts/run-doc-examples.py). Long: it brings up
# emulated clusters and serves; README's tour alone is in `make test`.
docs-check: build
	/usr/bin/python3 scripts/run-doc-examples.py --binary $(BUILD_DIR)/shoal \
	  README.md $(filter-out docs/BENCHMARKS.md,$(wildcard docs/*.md))

# Every libFuzzer target for FUZZ_SECONDS each (a clang tree in build-fuzz;
# docs/testing.md); fails on a crash, leaving its input under
# build-fuzz/fuzz-out/crashes/.
fuzz: test-deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) bash scripts/fuzz.sh

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

# shoal-worker for 64-bit ARM boards, cross-compiled (docs/packaging.md).
worker-arm64:
	bash scripts/install-deps.sh --worker-arm64
	bash scripts/build-worker-arm64.sh $(ARM64_BUILD_DIR) $(JOBS)

# The whole of shoal for 64-bit ARM boards, cross-compiled, and
# shoal-worker beside it: $(ARM64_BUILD_DIR)/full/shoal (without the libtorch
# module: docs/packaging.md) and $(ARM64_BUILD_DIR)/shoal-worker.
arm64:
	bash scripts/install-deps.sh --arm64
	bash scripts/build-worker-arm64.sh $(ARM64_BUILD_DIR) $(JOBS)
	bash scripts/build-shoal-arm64.sh $(ARM64_BUILD_DIR)/full $(JOBS)

# The arm64 builds under qemu-user: the worker beside an amd64 one and its
# kernels (also part of `make test`), and the whole of shoal (plan, run,
# serve, its package; not in `make test`): the cross builds and the tests
# alone.
test-arm64: test-deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target shoal shoal_slow_tests
	cd $(BUILD_DIR) && ctest --output-on-failure -R '^Arm64(Worker|Kernels|Shoal)'

# Debian packages: shoal (the tool) and shoal-worker, for amd64 and arm64.
deb: build
	cd $(BUILD_DIR) && cpack

deb-worker:
	bash scripts/install-deps.sh --worker
	cmake -S . -B $(WORKER_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DSHOAL_WORKER_ONLY=ON
	cmake --build $(WORKER_BUILD_DIR) -j $(JOBS)
	cd $(WORKER_BUILD_DIR) && cpack

deb-worker-arm64: worker-arm64
	cd $(ARM64_BUILD_DIR) && cpack

# shoal_0.1.0_arm64.deb beside shoal-worker_0.1.0_arm64.deb in
# $(ARM64_BUILD_DIR).
deb-arm64: arm64
	cd $(ARM64_BUILD_DIR) && cpack
	cd $(ARM64_BUILD_DIR)/full && cpack && cp shoal_*_arm64.deb ..

clean:
	rm -rf $(BUILD_DIR)
