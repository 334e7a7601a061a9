#!/bin/sh
# Starts the kosa8 agent; tini runs this as its only child (PID 2).
# The JVM flags keep start-up short and memory small: one compiler thread,
# C1 only, serial GC, the CDS archive jlink made for this runtime.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
export LANG=C.UTF-8
cd /
exec /opt/kosa8/jre/bin/java -XX:+UseSerialGC -Xms8m -Xmx64m -Xss512k \
    -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -Xshare:auto \
    --enable-native-access=ALL-UNNAMED \
    -cp /run/kosa8/agent.jar dev.kosa8.agent.AgentMain "$@" 2>/dev/console
