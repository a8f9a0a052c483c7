# Roster — the front door. `make run` starts a standalone server; `make test` runs every test.
MVN      ?= ./mvnw -B
JAVA     ?= java
ARGS     ?=
BUF_VERSION := 1.75.0
# playwright-core drives Debian's chromium in the console's browser test (ConsoleBrowserTest).
PLAYWRIGHT_VERSION := 1.65.2
PLAYWRIGHT := $(CURDIR)/.tools/node_modules/playwright-core/index.mjs
# grpc-js and its xDS plugin: Node's proxyless gRPC client, for the xDS test (XdsClientTest).
GRPC_JS_VERSION := 1.14.7
GRPC_JS_XDS_VERSION := 1.14.1
GRPC_JS_XDS := $(CURDIR)/.tools/node_modules/@grpc/grpc-js-xds/package.json
BUF      := $(CURDIR)/.tools/node_modules/.bin/buf
JAR      := server/target/roster-server.jar
# Class-data-sharing archive of the server's startup classes: a shorter start to SERVING (docs/benchmarks.md).
CDS      := server/target/roster-server.jsa
# The JVM flags the server ships with (one line; the bench and the integration tests read it too):
# a small initial heap that gives memory back after a peak. See docs/benchmarks.md (W8).
JVM_OPTIONS := $(shell cat server/jvm.options)
JAVA_OPTS ?= -XX:SharedArchiveFile=$(CDS) $(JVM_OPTIONS)
SOURCES  := $(shell find pom.xml proto server -path '*/target' -prune -o -type f \( -name '*.java' -o -name '*.proto' -o -name 'pom.xml' -o -name '*.xml' \) -print 2>/dev/null)

.PHONY: build run test lint clean tools measure chaos bench cluster cluster-up cluster-down upgrade-test

## build: compile every module and package the server jar (no tests), then record its CDS archive
build:
	$(MVN) -q install -DskipTests
	@$(MAKE) --no-print-directory $(CDS)

$(JAR): $(SOURCES)
	$(MVN) -q install -DskipTests -pl server -am

# A training run: start, reach SERVING, stop; the JVM writes the archive on exit. The jar is
# named by its absolute path so that launchers from other directories can use the archive. A stale or
# missing archive only costs startup time (the JVM says so and goes on without it).
$(CDS): $(JAR)
	@rm -rf $(CDS) server/target/cds-data
	@$(JAVA) -XX:ArchiveClassesAtExit=$(CDS) -jar $(abspath $(JAR)) --host 127.0.0.1 --port 0 \
	  --data-dir $(abspath server/target/cds-data) --exit-when-ready > /dev/null 2>&1 \
	  || echo "note: could not record $(CDS); the server starts without it"
	@rm -rf server/target/cds-data

## run: start a standalone server on 0.0.0.0:9848 (builds first if needed); ARGS="--port 9000" to pass flags
run: $(JAR) $(CDS)
	$(JAVA) $(JAVA_OPTS) -jar $(JAR) $(ARGS)

## upgrade-test: a rolling upgrade of three local members from the jar of PREVIOUS (a git revision, default HEAD~1),
##               built in target/previous/, to this tree's (RollingUpgradeTest; make test skips it)
PREVIOUS ?= HEAD~1
upgrade-test: build
	@rm -rf target/previous && mkdir -p target && git clone -q . target/previous && git -C target/previous checkout -q $(PREVIOUS)
	cd target/previous && $(MVN) -q package -DskipTests -pl proto,server -am
	$(MVN) -pl integration-tests verify -Dtest=RollingUpgradeTest -Dsurefire.failIfNoSpecifiedTests=false \
	  -Droster.previous.jar=$(CURDIR)/target/previous/server/target/roster-server.jar

## cluster: three local nodes without Docker, in the foreground until Ctrl-C (which stops all three): node1..node3
##          on 127.0.0.1, client ports 9848/9858/9868, peer ports 9849/9859/9869, data and logs in target/cluster/;
##          same jar, CDS archive and JAVA_OPTS as `make run`; CLUSTER_ARGS="--push-window 0s" passes flags to every node
CLUSTER_ARGS ?=
cluster: $(JAR) $(CDS)
	@JAVA="$(JAVA)" JAVA_OPTS="$(JAVA_OPTS)" scripts/cluster.sh $(JAR) $(CLUSTER_ARGS)

## cluster-up: the same three nodes in Docker (docker/docker-compose.yml), image built from this tree; needs a Docker engine
##             and Compose v2 (DOCKER_COMPOSE=docker-compose for the standalone one)
DOCKER_COMPOSE ?= docker compose
cluster-up:
	$(DOCKER_COMPOSE) -f docker/docker-compose.yml up -d --build

## cluster-down: stop and remove the Docker cluster's containers (their data volumes stay; `down -v` drops them)
cluster-down:
	$(DOCKER_COMPOSE) -f docker/docker-compose.yml down

## tools: install buf (proto lint, buf curl), playwright-core (the console's browser test) and grpc-js-xds (Node's xDS test) under .tools/ when npm is available
tools:
	@if [ -x "$(BUF)" ] && [ -f "$(PLAYWRIGHT)" ] && [ -f "$(GRPC_JS_XDS)" ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
	  echo "Installing @bufbuild/buf $(BUF_VERSION), playwright-core $(PLAYWRIGHT_VERSION) and @grpc/grpc-js-xds $(GRPC_JS_XDS_VERSION) into .tools/"; \
	  npm install --silent --no-audit --no-fund --prefix .tools @bufbuild/buf@$(BUF_VERSION) \
	    playwright-core@$(PLAYWRIGHT_VERSION) @grpc/grpc-js@$(GRPC_JS_VERSION) @grpc/grpc-js-xds@$(GRPC_JS_XDS_VERSION) >/dev/null; \
	else echo "npm not found: buf lint, the buf curl test, the console's browser test and Node's xDS test will be skipped"; fi

## lint: buf lint over the protos
lint: tools
	@if [ -x "$(BUF)" ]; then cd proto && $(BUF) lint && echo "buf lint: ok"; \
	elif [ "$$CI" = "true" ]; then echo "buf is required in CI" >&2; exit 1; \
	else echo "buf not installed: skipping buf lint"; fi

## test: buf lint, then every unit, gRPC and integration test
test: lint
	$(MVN) install -Droster.buf=$(BUF)

## measure: latency (register -> notify, kill -9 and freeze -> removal, drain), start -> SERVING, idle RSS and
##          restart figures against the real jar and real processes (not part of test); writes integration-tests/target/measurements.txt
measure: build
	$(MVN) -q test -pl integration-tests -Dtest=Measurements -Dgroups=measure -Droster.excludedGroups=
	@cat integration-tests/target/measurements.txt

## chaos: the long run of the cluster's fault suite against three local members (not part of test): 200 SDK clients
##        in 8 JVMs and a persistent writer; random kill -9 / SIGSTOP / restarts of members, frozen or dropped peer
##        links, CPU hogs, and kill -9 of client JVMs for CHAOS_DURATION (10m); CHAOS_SEED=N replays a run. Ends with
##        a summary line: actions, lost, ghosts, flaps, lost persistent writes, owner changes.
CHAOS_DURATION ?= 10m
CHAOS_SEED ?=
chaos: build
	$(MVN) -q test -pl integration-tests -Dtest=ChaosTest -Dgroups=chaos -Droster.excludedGroups= \
	  -Droster.chaos.duration=$(CHAOS_DURATION) $(if $(CHAOS_SEED),-Droster.chaos.seed=$(CHAOS_SEED))
	@cat integration-tests/target/chaos-summary.txt

## bench: the load generator (startup, first, warmkill, W1-W9, own server per workload; W10-W12, own 3-node cluster each) then the JMH microbenchmarks;
##        QUICK=1 for small sizes (under 2 minutes); BENCH_ARGS="--workloads w4,w6" or
##        BENCH_ARGS="--driver nacos --target host:8848" to pass flags (see: java -jar $(BENCH_JAR) --help)
BENCH_JAR  := bench/target/roster-bench.jar
BENCH_JVM  ?= -Xmx2g
BENCH_ARGS ?=
JMH_ARGS   ?= $(if $(QUICK),-f 1 -wi 1 -w 500ms -i 2 -r 500ms -p instances=100,-f 1)
bench:
	$(MVN) -q -pl bench -am package -DskipTests
	@$(MAKE) --no-print-directory $(CDS)
	$(JAVA) $(BENCH_JVM) -jar $(BENCH_JAR) $(if $(QUICK),--quick) $(BENCH_ARGS)
	$(JAVA) -jar $(BENCH_JAR) jmh $(JMH_ARGS) -jvmArgs -Xmx1g -rf text -rff bench/target/jmh-results.txt
	@echo; cat bench/target/bench-results.md; echo; cat bench/target/jmh-results.txt

clean:
	$(MVN) -q clean
	rm -rf .tools
