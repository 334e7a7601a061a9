package dev.kosa8.client;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What sandbox to create. Everything left unset is the daemon's default:
 * the {@code kosa8/debian} image, 2 CPUs, 1 GiB, no workspace, a closed
 * network that allows nothing.
 * <pre>{@code
 * SandboxSpec.builder().image("node-dev").memoryMiB(2048).workspace(Path.of("."))
 *            .allow("registry.npmjs.org").secret("NPM_TOKEN").publish("8080:3000").build()
 * }</pre>
 *
 * @param image     an image name ({@code kosa8 image ls}); "" for the default
 * @param cpus      virtual CPUs; 0 for the default
 * @param memoryMiB guest memory; 0 for the default
 * @param workspace the one host folder it shares, live, at the same path; null for none
 * @param network   {@code closed} (allow-listed hosts only), {@code open} or {@code none}; "" for closed
 * @param allow     allow-list rules or {@code @presets} (docs/network.md)
 * @param secrets   names of secrets in the user's store the sandbox gets placeholders of (never the values)
 * @param ports     ports to publish, as {@code [[ADDRESS:]HOST:]GUEST}
 * @param keep      when true, {@link Sandbox#close()} leaves the sandbox running instead of removing it
 */
public record SandboxSpec(String image, int cpus, int memoryMiB, Path workspace, String network, List<String> allow,
                          List<String> secrets, List<String> ports, boolean keep) {

    public SandboxSpec {
        image = image == null ? "" : image;
        network = network == null ? "" : network;
        allow = List.copyOf(allow);
        secrets = List.copyOf(secrets);
        ports = List.copyOf(ports);
        if (cpus < 0 || memoryMiB < 0) {
            throw new IllegalArgumentException("cpus and memory cannot be negative");
        }
        if (!network.isEmpty() && !List.of("closed", "open", "none").contains(network)) {
            throw new IllegalArgumentException("network is closed, open or none, not '" + network + "'");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The spec's query for {@code POST /v1/sandboxes}. */
    String query() {
        StringBuilder q = new StringBuilder();
        if (!image.isEmpty()) {
            add(q, "image", image);
        }
        if (cpus > 0) {
            add(q, "cpus", String.valueOf(cpus));
        }
        if (memoryMiB > 0) {
            add(q, "memoryMiB", String.valueOf(memoryMiB));
        }
        if (workspace != null) {
            add(q, "workspace", workspace.toAbsolutePath().normalize().toString());
        }
        if (!network.isEmpty()) {
            add(q, "net", network);
        }
        allow.forEach(r -> add(q, "allow", r));
        secrets.forEach(s -> add(q, "secret", s));
        ports.forEach(p -> add(q, "port", p));
        return q.toString();
    }

    static void add(StringBuilder q, String name, String value) {
        q.append(q.isEmpty() ? "" : "&").append(name).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
    }

    /** Builds a {@link SandboxSpec}. */
    public static final class Builder {
        private String image = "";
        private int cpus;
        private int memoryMiB;
        private Path workspace;
        private String network = "";
        private final List<String> allow = new ArrayList<>();
        private final List<String> secrets = new ArrayList<>();
        private final List<String> ports = new ArrayList<>();
        private boolean keep;

        private Builder() {
        }

        public Builder image(String name) {
            this.image = name;
            return this;
        }

        public Builder cpus(int n) {
            this.cpus = n;
            return this;
        }

        public Builder memoryMiB(int mebibytes) {
            this.memoryMiB = mebibytes;
            return this;
        }

        public Builder workspace(Path folder) {
            this.workspace = folder;
            return this;
        }

        /** {@code closed} (the default), {@code open} or {@code none}. */
        public Builder network(String mode) {
            this.network = mode;
            return this;
        }

        /** Allows a host (or a rule, or an {@code @preset}) through the closed network. */
        public Builder allow(String rule) {
            this.allow.add(rule);
            return this;
        }

        /** Gives the sandbox a placeholder of this secret; the daemon's broker puts the value in on the way out. */
        public Builder secret(String name) {
            this.secrets.add(name);
            return this;
        }

        /** Publishes a guest port on the host's loopback: {@code [[ADDRESS:]HOST:]GUEST}. */
        public Builder publish(String port) {
            this.ports.add(port);
            return this;
        }

        /** Leaves the sandbox running when its {@link Sandbox} is closed. */
        public Builder keep(boolean keep) {
            this.keep = keep;
            return this;
        }

        public SandboxSpec build() {
            return new SandboxSpec(image, cpus, memoryMiB, workspace, network, allow, secrets, ports, keep);
        }
    }
}
