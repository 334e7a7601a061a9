package dev.kosa8.agent;

import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ProtocolException;
import java.io.BufferedOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.file.Path;

/**
 * The kosa8 agent: the program inside the guest that runs the host's commands.
 * Started by the guest's init under tini (PID 1). It opens the agent's
 * virtio-serial port and serves one host session at a time; when the host
 * disconnects (the daemon restarted), reads on the port see end of file, and
 * the agent waits for the next session on the same port. A sandbox with a
 * network has a second port for it, which {@link NetPort} serves on threads of
 * its own.
 */
public final class AgentMain {
    static final String SOFTWARE = "kosa8-agent 0.1";

    private AgentMain() {
    }

    public static void main(String[] args) throws Exception {
        long started = System.currentTimeMillis();
        SandboxCgroup.setUp();
        NetPort.startIfNetworked(uptimeMillis());
        Path device = VirtioPort.find(VirtioPort.NAME, 30_000);
        long bootMillis = uptimeMillis();
        Log.info("ready on " + device + " after " + (System.currentTimeMillis() - started) + " ms in the JVM, "
                + bootMillis + " ms since boot");
        GuestAsks asks = new GuestAsks();
        new AskListener(asks).start();
        try (RandomAccessFile port = VirtioPort.open(device)) {
            InputStream in = new FileInputStream(port.getFD());
            FrameWriter writer = new FrameWriter(new BufferedOutputStream(new FileOutputStream(port.getFD()), 1 << 18));
            // end of file only once no host has been there for a while: the driver can say "gone" late (PortInput)
            FrameReader reader = new FrameReader(new PortInput(in, 20));
            while (true) {
                Message first;
                try {
                    first = reader.read();
                } catch (IOException | ProtocolException e) {
                    Log.info("dropping a broken session start: " + e.getMessage());
                    Thread.sleep(20);
                    continue;
                }
                if (first == null) {
                    // no host connected: the port reads as end of file until one is
                    Thread.sleep(20);
                    continue;
                }
                try {
                    Message.Hello next = new Session(reader, writer, bootMillis, asks).serve(first);
                    while (next != null) {
                        Log.info("a new host took over");
                        next = new Session(reader, writer, bootMillis, asks).serve(next);
                    }
                    Log.info("host disconnected");
                } catch (IOException | ProtocolException e) {
                    Log.info("session ended: " + e.getMessage());
                } catch (RuntimeException e) {
                    // a bug must cost the session, never the agent: the host can connect again
                    Log.info("session failed: " + e);
                }
            }
        }
    }

    private static long uptimeMillis() {
        try {
            String s = java.nio.file.Files.readString(Path.of("/proc/uptime"));
            return (long) (Double.parseDouble(s.substring(0, s.indexOf(' '))) * 1000);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
