package dev.kosa8.mcp;

import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A backend for the tools' unit tests: it records each call and answers as the daemon would, from memory. The
 * real daemon behind {@code cli.DaemonMcpBackend} is what McpIT drives; here only the tools' own work is tested:
 * what they check, send and answer.
 */
class RecordingBackend implements McpBackend {
    final List<String> calls = new ArrayList<>();
    final List<CreateSpec> creates = new ArrayList<>();
    private int next = 1;
    RuntimeException failRemove;

    private static Map<String, Object> sandbox(String id) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("state", "running");
        return m;
    }

    @Override
    public synchronized Object create(CreateSpec spec) {
        creates.add(spec);
        String id = String.format("%012x", next++);
        calls.add("create " + id);
        return sandbox(id);
    }

    @Override
    public Object list() {
        return List.of();
    }

    @Override
    public Object inspect(String sandbox) {
        return sandbox(sandbox);
    }

    @Override
    public synchronized Object remove(String sandbox) {
        calls.add("remove " + sandbox);
        if (failRemove != null) {
            throw failRemove;
        }
        return Map.of("removed", sandbox);
    }

    @Override
    public ExecResult exec(String sandbox, ExecRequest request) {
        calls.add("exec " + sandbox + " " + request.argv());
        if (request.argv().contains("missing-program")) {
            throw new KosaException(KosaException.Kind.USAGE, "missing-program: not found", "check the name");
        }
        return new ExecResult(0, "42\n".getBytes(), new byte[0], 3, 0, false);
    }

    @Override
    public Object startProcess(String sandbox, List<String> argv, Map<String, String> env, String cwd, String tag,
                               long timeoutSeconds, boolean keepStdin) {
        calls.add("start " + argv);
        return Map.of("id", "p1");
    }

    @Override
    public Object processes(String sandbox) {
        return List.of();
    }

    @Override
    public Object output(String sandbox, String process, long from, int max, int waitSeconds) {
        return Map.of();
    }

    @Override
    public void writeStdin(String sandbox, String process, byte[] bytes) {
        calls.add("stdin " + bytes.length);
    }

    @Override
    public void closeStdin(String sandbox, String process) {
        calls.add("close-stdin");
    }

    @Override
    public Object signal(String sandbox, String process, String signal) {
        calls.add("signal " + signal);
        return Map.of();
    }

    @Override
    public void writeFile(String sandbox, String path, byte[] content, int mode) {
        calls.add("write " + path + " " + content.length + " " + Integer.toOctalString(mode));
    }

    @Override
    public FileContent readFile(String sandbox, String path, int maxBytes) {
        return new FileContent("hi".getBytes(), 2, 0644, false);
    }

    @Override
    public Object stat(String sandbox, String path, boolean follow) {
        calls.add("stat " + path + " " + follow);
        return Map.of("path", path, "type", "file");
    }

    @Override
    public Object listFiles(String sandbox, String path, int depth, int max) {
        calls.add("list " + path + " " + depth + " " + max);
        return Map.of("entries", List.of(), "truncated", false);
    }

    @Override
    public Object makeDirectory(String sandbox, String path, boolean existOk) {
        calls.add("mkdir " + path + " " + existOk);
        return Map.of();
    }

    @Override
    public Object removeFile(String sandbox, String path, boolean recursive) {
        calls.add("rm " + path + " " + recursive);
        return Map.of();
    }

    @Override
    public Object rename(String sandbox, String from, String to, boolean replace) {
        calls.add("rename " + from + " " + to + " " + replace);
        return Map.of();
    }

    @Override
    public Object checkpoint(String sandbox, String message) {
        return Map.of("id", "c1");
    }

    @Override
    public Object checkpoints(String sandbox) {
        return List.of();
    }

    @Override
    public Object rewind(String sandbox, String checkpoint) {
        return Map.of();
    }

    @Override
    public synchronized Object fork(String sandbox, String checkpoint, String createdBy) {
        String id = String.format("%012x", next++);
        calls.add("fork " + id + " " + createdBy);
        return sandbox(id);
    }

    @Override
    public Object diff(String sandbox, String checkpoint) {
        return Map.of();
    }

    @Override
    public Object network(String sandbox) {
        return Map.of();
    }

    @Override
    public Object allow(String sandbox, List<String> rules) {
        calls.add("allow " + rules);
        return Map.of();
    }

    @Override
    public Object deny(String sandbox, String host) {
        return Map.of();
    }

    @Override
    public Object grantSecret(String sandbox, String name) {
        return Map.of();
    }
}
