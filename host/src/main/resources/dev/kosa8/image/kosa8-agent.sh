#!/bin/sh
# Starts the kosa8 agent; tini runs this as its only child (PID 2).
# The JVM flags keep start-up short and memory small: one compiler thread,
# C1 only, serial GC, the CDS archive jlink made for this runtime; a heap that
# gives memory back after a burst (free ratios), a small code cache, no
# perf-data file. Measured in BENCHMARKS.md (agent RSS).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
export LANG=C.UTF-8
cd /
# On an imported image kosa8's own runtime and C library are at /run/kosa8/sys: Java starts through that
# library's loader, so nothing of the image's is needed.
java=/opt/kosa8/jre/bin/java
if [ -x /run/kosa8/sys/jre/bin/java ]; then
    java="/run/kosa8/sys/lib/ld-linux-x86-64.so.2 --library-path /run/kosa8/sys/lib /run/kosa8/sys/jre/bin/java"
fi
# $java is split into words on purpose
exec $java -XX:+UseSerialGC -Xms8m -Xmx64m -Xss512k \
    -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30 -XX:ReservedCodeCacheSize=16m -XX:-UsePerfData \
    -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -Xshare:auto \
    --enable-native-access=ALL-UNNAMED \
    -cp /run/kosa8/agent.jar dev.kosa8.agent.AgentMain "$@" 2>/dev/console
