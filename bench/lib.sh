# Shared by the bench scripts that run a guest workload (source it).

# dirty_memory KOSA8 ID MIB: starts, in sandbox ID, a guest process that keeps writing to every page of MIB MiB
# (the workload the checkpoint benchmarks take their checkpoints and rewinds under); returns once it is started.
dirty_memory() {
  "$1" exec "$2" -- sh -c "nohup python3 -c '
b = bytearray($3 << 20)
i = 0
while True:
    for p in range(0, len(b), 4096): b[p] = i & 255
    i += 1
' > /dev/null 2>&1 &"
}
