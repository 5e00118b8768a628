# shoal: the two set-up commands are `make demo` and `make test`; each runs
# the dependency script and the build first, so either alone works on a
# fresh Debian 12 machine.
BUILD_DIR ?= build
JOBS ?= 2
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=

.PHONY: deps test-deps build test demo bench fuzz clean format

deps:
	bash scripts/install-deps.sh

test-deps:
	bash scripts/install-deps.sh --with-test-deps

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: test-deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

demo: build
	./$(BUILD_DIR)/shoal demo

bench: build
	bash bench/run_all.sh

# Every libFuzzer target for FUZZ_SECONDS each (a clang tree in build-fuzz;
# docs/testing.md); fails on a crash, leaving its input under
# build-fuzz/fuzz-out/crashes/.
fuzz: test-deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) bash scripts/fuzz.sh

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR)
