# baton - one non-recursive Makefile.
#   make          build/baton, build/libbaton.a and build/libbaton.so (-fPIC objects
#                 in build/pic/, exporting only include/baton.h's functions)
#   make demo     install missing packages, build, run the candy kids and an H100 what-if
#   make test     install missing packages, run the suite, then again under ASan+UBSan,
#                 then the teaching pages in headless Chromium (skipped, saying so,
#                 without a browser), then the Slurm array example on a real
#                 one-node Slurm (skipped, saying so, without slurm-wlm and munge),
#                 then a fuzz smoke run (FUZZ_SMOKE seconds per fuzzer, default 10)
#   make valgrind the CLI's example commands under memcheck: no errors, no leaks
#   make bench    events/s, wall time and peak memory of the engine
#   make fuzz     libFuzzer (clang) on the topology loader, the nccl-tests reader and
#                 the unit parsers, FUZZ_SECONDS each (default 30)
# Package flags come from pkg-config when a recipe runs (recursive `=`), after
# build/.deps has made sure the packages are there.

CC      ?= cc
PKGS     = yaml-0.1 libcjson gsl expat
CSTD     = -std=c11 -D_POSIX_C_SOURCE=200809L
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT     ?= -O2 -g -flto=auto -ffat-lto-objects
CFLAGS_ALL = $(CSTD) $(WARN) $(OPT) $(EXTRA_CFLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -lpthread
TEST_LIBS = $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)

B       ?= build
SAN      = build-san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC  = topologies/dragonfly.c algorithms/group.c util/err.c util/wfile.c util/par.c util/progress.c util/suggest.c models/share.c models/proto.c models/gpu.c models/llm.c sim/nccl/tuning.c models/arch.c models/fit.c topologies/units.c topologies/topo.c topologies/topo_fold.c topologies/topo_route.c topologies/topo_twin.c topologies/topo_yaml.c topologies/ydoc.c topologies/mfile.c topologies/mfile_params.c topologies/mfile_graph.c topologies/mfile_include.c \
           topologies/mfile_machine.c topologies/mfile_library.c topologies/mfile_calib.c topologies/mfile_fold.c topologies/find.c topologies/knobs.c \
           topologies/expand.c topologies/generate.c topologies/fold.c topologies/flow.c topologies/linkload.c topologies/graph.c topologies/import.c topologies/topo_write.c \
           validate/nccltests.c validate/ntlines.c validate/tuninglines.c validate/calsample.c validate/calibrate.c validate/logplan.c validate/tuningplan.c validate/tunerfile.c validate/tuner_csv.c validate/host.c validate/ncclinfo.c validate/expect.c validate/doctor.c \
           algorithms/sched.c algorithms/algo.c algorithms/msccl.c algorithms/msccl_xml.c algorithms/msccl_export.c algorithms/ring.c algorithms/tree.c \
           algorithms/naive.c algorithms/halving_doubling.c algorithms/bruck.c \
           algorithms/pipeline.c algorithms/scatter_allgather.c algorithms/direct.c algorithms/alltoall.c \
           algorithms/bintree.c algorithms/hierarchical.c algorithms/nvls.c algorithms/nvls_node.c algorithms/nvlstree.c algorithms/collnet.c algorithms/pat.c algorithms/symmetric.c sim/engine/evq.c sim/engine/book.c sim/engine/verify.c sim/engine/engine.c sim/engine/stream.c sim/engine/xfer.c sim/engine/footprint.c sim/engine/symmetry.c \
           sim/answer/report.c \
           sim/answer/run.c sim/form/form.c sim/nccl/view.c sim/nccl/ncclrule.c sim/nccl/sockmsgs.c sim/nccl/nccl.c sim/form/peers.c sim/answer/concurrent.c sim/answer/step.c sim/nccl/plan.c sim/answer/plot.c sim/teach/kids.c sim/answer/select.c sim/answer/tp.c sim/answer/choice.c sim/engine/trace.c sim/replay/chakra.c sim/replay/chakra_gen.c sim/replay/replay.c sim/replay/replay_comm.c sim/replay/replay_share.c sim/replay/replay_trace.c \
           sim/teach/tape.c sim/teach/page.c sim/teach/lesson.c sim/lib/api.c
CLI_SRC  = sim/cli/main.c sim/cli/cmd.c sim/cli/cmd_sim.c sim/cli/cmd_sim_explain.c sim/cli/cmd_kids.c sim/cli/cmd_topo.c sim/cli/cmd_plan.c sim/cli/cmd_algos.c sim/cli/cmd_select.c sim/cli/cmd_tp.c sim/cli/cmd_concurrent.c sim/cli/cmd_step.c sim/cli/cmd_sweep.c sim/cli/cmd_validate.c sim/cli/cmd_validate_logs.c sim/cli/cmd_validate_table.c sim/cli/cmd_validate_fit.c sim/cli/cmd_expect.c sim/cli/cmd_doctor.c sim/cli/cmd_export.c sim/cli/cmd_replay.c
TEST_SRC = $(wildcard tests/test_*.c) tests/helpers.c
BENCH_SRC = bench/bench_engine.c bench/bench_models.c bench/bench_evq.c

LIB_OBJ   = $(LIB_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/page_assets.o
PIC_OBJ   = $(LIB_SRC:%.c=$(B)/pic/%.o) $(B)/pic/gen/page_assets.o
CLI_OBJ   = $(CLI_SRC:%.c=$(B)/obj/%.o)
TEST_OBJ  = $(TEST_SRC:%.c=$(B)/obj/%.o)
BENCH_OBJ = $(BENCH_SRC:%.c=$(B)/obj/%.o)

.PHONY: tuner-plugin install uninstall fidelity all demo test test-plain test-san test-browser test-slurm test-fuzz valgrind bench clean deps cuda fuzz FORCE
all: $(B)/baton $(B)/libbaton.a $(B)/libbaton.so

deps: build/.deps
build/.deps: scripts/deps.sh
	@mkdir -p build
	@sh scripts/deps.sh
	@touch $@

$(B)/obj/%.o: %.c | build/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# The teaching page's CSS and script (sim/teach/page/) become C strings.
PAGE_ASSETS = sim/teach/page/teach.css sim/teach/page/teach.js
$(B)/gen/page_assets.c: $(PAGE_ASSETS) scripts/cstring.sh
	@mkdir -p $(dir $@)
	@{ sh scripts/cstring.sh page_css sim/teach/page/teach.css && sh scripts/cstring.sh page_js sim/teach/page/teach.js; } > $@.tmp
	@mv $@.tmp $@

$(B)/obj/gen/page_assets.o: $(B)/gen/page_assets.c | build/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/libbaton.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

# The shared library: the same sources again as position-independent code,
# every symbol hidden but include/baton.h's (BATON_API), its dependencies
# recorded in it (DT_NEEDED) so that `-lbaton` alone links.
VERSION   = 0.4.0
SOMAJOR   = 0
PIC_FLAGS = -fPIC -fvisibility=hidden
$(B)/pic/%.o: %.c | build/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(PIC_FLAGS) -MMD -MP -c $< -o $@

$(B)/pic/gen/page_assets.o: $(B)/gen/page_assets.c | build/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(PIC_FLAGS) -c $< -o $@

$(B)/obj/sim/lib/api.o $(B)/pic/sim/lib/api.o: CFLAGS_ALL += -DBATON_VERSION='"$(VERSION)"'

$(B)/libbaton.so: $(PIC_OBJ)
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libbaton.so.$(SOMAJOR) -Wl,--no-undefined -o $@ $^ $(LIBS)

# The NCCL tuner plugin (tuner/): NCCL's tuner interface over libbaton's
# position-independent objects, one self-contained library exporting only
# ncclTunerPlugin_v6 .. _v2 (tuner/exports.map).
# validate/tuner_csv.c (the table it reads) is in LIB_SRC: plan and validate read the tuner file too.
TUNER_SRC = tuner/baton_tuner.c
TUNER_OBJ = $(TUNER_SRC:%.c=$(B)/pic/%.o)
tuner-plugin: $(B)/libnccl-tuner-baton.so
$(B)/libnccl-tuner-baton.so: $(TUNER_OBJ) $(PIC_OBJ) tuner/exports.map
	$(CC) $(CFLAGS_ALL) -shared -Wl,--version-script=tuner/exports.map -Wl,--no-undefined -o $@ $(TUNER_OBJ) $(PIC_OBJ) $(LIBS)

$(B)/tuner_harness: tests/tuner/harness.c
	$(CC) $(CSTD) $(WARN) -O1 -g -o $@ $< -ldl

$(B)/baton: $(CLI_OBJ) $(B)/libbaton.a
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(B)/libbaton.a $(LIBS)

$(B)/tests: $(TEST_OBJ) $(B)/libbaton.a
	$(CC) $(CFLAGS_ALL) -o $@ $(TEST_OBJ) $(B)/libbaton.a $(LIBS) $(TEST_LIBS)

$(B)/bench_%: $(B)/obj/bench/bench_%.o $(B)/libbaton.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libbaton.a $(LIBS)

demo: $(B)/baton
	@sh examples/candy-kids.sh $(B)/baton
	@echo
	$(B)/baton sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1GiB --verify
	@echo
	$(B)/baton predict -t topologies/hgx-h100.yaml -c allreduce -a binomial -s 1GiB

# The suite runs twice: a plain build, then an ASan+UBSan build in build-san/;
# then each fuzzer for FUZZ_SMOKE seconds.
FUZZ_SMOKE ?= 10
test: test-plain test-san test-browser test-slurm test-fuzz

test-fuzz: build/.deps
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE)

test-plain: $(B)/baton $(B)/tests $(B)/libbaton.a $(B)/libbaton.so $(B)/libnccl-tuner-baton.so $(B)/tuner_harness
	BATON_BIN=$(B)/baton $(B)/tests $(TEST_ARGS)

# The teaching pages in headless Chromium, step by step against the
# simulator (tests/browser/); says SKIP where no browser is installed.
test-browser: $(B)/baton
	sh tests/browser/run.sh $(B)/baton

# examples/sweep-slurm.sbatch through a real one-node Slurm (tests/slurm/);
# says SKIP, and why, where slurm-wlm and munge are missing or cannot start.
test-slurm: $(B)/baton
	sh tests/slurm/run.sh $(B)/baton

test-san: build/.deps
	$(MAKE) --no-print-directory B=$(SAN) OPT="-O1 -g" EXTRA_CFLAGS="$(SANFLAGS)" $(SAN)/baton $(SAN)/tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  BATON_BIN=$(SAN)/baton $(SAN)/tests --jobs 2 $(TEST_ARGS)

valgrind: $(B)/baton
	sh scripts/valgrind.sh $(B)/baton

# Engine cases ALGO:RANKS:MACHINE[:symmetric], one process each; the table lands in docs/guide/scaling-out.md.
BENCH_CASES = ring:1024:ring ring:4096:ring ring:8192:ring tree:65536:switch rd:65536:switch \
              rabenseifner:65536:switch ring:4096:switch ring:4096:switch:symmetric \
              ring:1048576:switch:symmetric
bench: $(B)/bench_engine $(B)/bench_models $(B)/bench_evq $(B)/baton
	$(B)/bench_evq
	sh bench/engine_table.sh $(B)/bench_engine docs/guide/scaling-out.md $(BENCH_CASES)
	$(B)/bench_models
	sh bench/bench_select.sh $(B)/baton
	sh bench/bench_host.sh $(B)/baton
	sh bench/bench_plan.sh $(B)/baton
	sh bench/bench_doctor.sh $(B)/baton
	sh bench/bench_calibrate.sh $(B)/baton
	sh bench/bench_cluster.sh $(B)/baton
	sh bench/bench_scale.sh $(B)/baton
	sh bench/bench_fair.sh $(B)/baton

# The CUDA backend (validate/cuda/): only where nvcc is, never needed by make or make test.
NVCC      ?= nvcc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
cuda: $(B)/libbaton.a
	@command -v $(NVCC) >/dev/null 2>&1 || { echo "make cuda: nvcc not found; the CUDA backend is optional" >&2; exit 1; }
	$(CC) $(CFLAGS_ALL) -c validate/cuda/shim.c -o $(B)/obj/cuda-shim.o
	$(NVCC) -O2 -std=c++17 -I$(CUDA_HOME)/include -o $(B)/baton-cuda validate/cuda/baton_cuda.cu $(B)/obj/cuda-shim.o \
	  $(B)/libbaton.a -L$(CUDA_HOME)/lib -L$(CUDA_HOME)/lib64 -lnccl $(LIBS)

# Fuzzing: the library built with clang's fuzzer instrumentation plus ASan and
# UBSan; each harness runs FUZZ_SECONDS on a corpus seeded from the shipped
# files. Inputs that fail are written to build-fuzz/ and belong, once fixed, in
# tests/fuzz/regressions/<harness>/ (the suite replays them).
FZ           = build-fuzz
FUZZ_SECONDS ?= 30
FUZZERS      = topo nccltests units import msccl chakra
FUZZ_SEEDS_topo      = topologies tests/data/bad tests/data/machines tests/fuzz/regressions/topo
FUZZ_SEEDS_nccltests = tests/data/nccl tests/fuzz/regressions/nccltests
FUZZ_SEEDS_units     = tests/fuzz/seeds/units tests/fuzz/regressions/units
FUZZ_SEEDS_import    = tests/fuzz/seeds/import tests/fuzz/regressions/import
FUZZ_SEEDS_msccl     = tests/data/msccl tests/data/msccl/bad tests/fuzz/regressions/msccl
FUZZ_SEEDS_chakra    = tests/data/chakra tests/data/chakra/protoc tests/fuzz/regressions/chakra
FUZZ_FLAGS   = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# Smaller limits than a real run's (4 M nodes): the fuzzer looks for parsing
# mistakes, and inputs naming a million nodes would slow it 100-fold.
FUZZ_LIMITS  = -DTOPO_MAX_NODES=16384 -DTOPO_MAX_LINKS=262144 -DEXPAND_MAX_NAMES=16384

$(FZ)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_input.c build/.deps FORCE
	@command -v clang >/dev/null 2>&1 || { echo "make fuzz: clang not found (apt-get install clang)" >&2; exit 1; }
	$(MAKE) --no-print-directory B=$(FZ) CC=clang OPT="-O1 -g" EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_FLAGS) $(FUZZ_LIMITS)" $(FZ)/libbaton.a
	clang $(CSTD) $(WARN) -O1 -g -fsanitize=fuzzer $(FUZZ_FLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
	  -o $@ tests/fuzz/fuzz_$*.c tests/fuzz/fuzz_input.c $(FZ)/libbaton.a $(LIBS)

fuzz: $(FUZZERS:%=$(FZ)/fuzz_%)
	@for f in $(FUZZERS); do \
	  mkdir -p $(FZ)/corpus/$$f tests/fuzz/regressions/$$f; \
	  case $$f in topo) seeds="$(FUZZ_SEEDS_topo)";; nccltests) seeds="$(FUZZ_SEEDS_nccltests)";; import) seeds="$(FUZZ_SEEDS_import)";; msccl) seeds="$(FUZZ_SEEDS_msccl)";; chakra) seeds="$(FUZZ_SEEDS_chakra)";; *) seeds="$(FUZZ_SEEDS_units)";; esac; \
	  echo "fuzz $$f: $(FUZZ_SECONDS) s"; \
	  $(FZ)/fuzz_$$f $(FZ)/corpus/$$f $$seeds -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -max_len=8192 -print_final_stats=1 -artifact_prefix=$(FZ)/$$f- 2>$(FZ)/$$f.log \
	    || { tail -40 $(FZ)/$$f.log; exit 1; }; \
	  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' $(FZ)/$$f.log; \
	done

FORCE:

clean:
	rm -rf build $(SAN) $(FZ)

-include $(shell find $(B) $(SAN) -name '*.d' 2>/dev/null)

# The fidelity table (docs/guide/nccl-plan.md): every public log with a shipped machine
# (validate/logs/MANIFEST), uncalibrated error of -a nccl, and the median;
# then `baton step` against published step times (scripts/fidelity-step.sh).
fidelity: $(B)/baton
	sh scripts/fidelity.sh $(B)/baton
	sh scripts/fidelity-step.sh $(B)/baton
	sh scripts/fidelity-scale.sh $(B)/baton

# Install: the binary, the shipped machines, the man page, libbaton (shared,
# libbaton.so.0, and static) with its one public header (PREFIX/include/baton.h)
# and two pkg-config files: baton.pc (`--libs`: the shared library; `--static
# --libs`: everything libbaton.a needs) and baton-static.pc (libbaton.a by
# path, its dependencies as installed). docs/decisions/library.md says why two.
PREFIX  ?= /usr/local
DESTDIR ?=
LIBDIR   = $(DESTDIR)$(PREFIX)/lib
PC_HEAD  = prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\n
install: $(B)/baton $(B)/libbaton.a $(B)/libbaton.so $(B)/libnccl-tuner-baton.so
	install -d $(DESTDIR)$(PREFIX)/bin $(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/baton/topologies/nodes $(DESTDIR)$(PREFIX)/include
	install -m 755 $(B)/baton $(DESTDIR)$(PREFIX)/bin/baton
	install -m 644 $(B)/libbaton.a $(LIBDIR)/libbaton.a
	install -m 755 $(B)/libbaton.so $(LIBDIR)/libbaton.so.$(VERSION)
	install -m 755 $(B)/libnccl-tuner-baton.so $(LIBDIR)/libnccl-tuner-baton.so
	ln -sf libbaton.so.$(VERSION) $(LIBDIR)/libbaton.so.$(SOMAJOR)
	ln -sf libbaton.so.$(SOMAJOR) $(LIBDIR)/libbaton.so
	install -m 644 topologies/*.yaml $(DESTDIR)$(PREFIX)/share/baton/topologies/
	install -m 644 topologies/nodes/*.yaml $(DESTDIR)$(PREFIX)/share/baton/topologies/nodes/
	install -m 644 docs/baton.1 $(DESTDIR)$(PREFIX)/share/man/man1/baton.1
	install -m 644 include/baton.h $(DESTDIR)$(PREFIX)/include/baton.h
	printf '$(PC_HEAD)Name: baton\nDescription: collective communication simulator and cost model\nVersion: $(VERSION)\nRequires.private: $(PKGS)\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lbaton\nLibs.private: -lm -lpthread\n' \
	  '$(PREFIX)' > $(LIBDIR)/pkgconfig/baton.pc
	printf '$(PC_HEAD)Name: baton-static\nDescription: collective communication simulator and cost model (libbaton.a)\nVersion: $(VERSION)\nRequires: $(PKGS)\nCflags: -I$${includedir}\nLibs: $${libdir}/libbaton.a -lm -lpthread\n' \
	  '$(PREFIX)' > $(LIBDIR)/pkgconfig/baton-static.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/baton $(LIBDIR)/libnccl-tuner-baton.so $(LIBDIR)/libbaton.a $(LIBDIR)/libbaton.so $(LIBDIR)/libbaton.so.$(SOMAJOR) \
	  $(LIBDIR)/libbaton.so.$(VERSION) $(LIBDIR)/pkgconfig/baton.pc $(LIBDIR)/pkgconfig/baton-static.pc \
	  $(DESTDIR)$(PREFIX)/share/man/man1/baton.1 $(DESTDIR)$(PREFIX)/include/baton.h
	rm -rf $(DESTDIR)$(PREFIX)/share/baton $(DESTDIR)$(PREFIX)/include/baton
