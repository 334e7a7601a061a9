package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxStoreTest {
    @TempDir
    Path root;

    static SandboxRecord record(String id) {
        return new SandboxRecord(id, Instant.parse("2026-11-29T10:00:00Z"), false, 2, 1024, "tcg", "img",
                SandboxState.RUNNING, 1234, Instant.parse("2026-11-29T10:00:01Z"), "", "/home/ann/project",
                new dev.kosa8.egress.SandboxNetwork(dev.kosa8.egress.NetMode.CLOSED, java.util.List.of("pypi.org",
                        "GET api.example.com/v1/")),
                java.util.List.of(new dev.kosa8.secrets.GrantedSecret("OPENAI_API_KEY", "OPENAI_API_KEY",
                        "sk-proj-5qHbW2xV9kLmN3pR7tY1zA4c")), dev.kosa8.vm.WorkspaceTransport.RELAY);
    }

    @Test
    void savesAndLoadsRecords() throws Exception {
        SandboxStore store = new SandboxStore(root);
        store.save(record("0123456789ab"));
        store.save(record("0123456789ab").failed("boom"));
        List<SandboxRecord> all = store.loadAll(p -> { });
        assertThat(all).singleElement().satisfies(r -> {
            assertThat(r.state()).isEqualTo(SandboxState.FAILED);
            assertThat(r.failure()).isEqualTo("boom");
            assertThat(r.network()).isEqualTo(record("0123456789ab").network());
            assertThat(r.secrets()).isEqualTo(record("0123456789ab").secrets());
        });
        assertThat(root.resolve("0123456789ab/sandbox.json.tmp")).doesNotExist();
        try (var files = Files.list(root.resolve("0123456789ab"))) {
            assertThat(files.map(f -> f.getFileName().toString())).as("no temporary file left").containsExactly(
                    "sandbox.json");
        }
    }

    @Test
    void anotherArchitecturesGuestIsKeptAndThisHostsSaysNothingOfIt() throws Exception {
        SandboxStore store = new SandboxStore(root);
        SandboxRecord r = record("0123456789ab");
        SandboxRecord named = new SandboxRecord(r.id(), r.created(), r.ephemeral(), r.cpus(), r.memoryMiB(),
                r.accelerator(), r.imageId(), r.state(), r.qemuPid(), r.qemuStarted(), r.failure(), r.workspace(),
                r.network(), r.secrets(), r.workspaceTransport(),
                new SandboxImage("tools:1", dev.kosa8.image.ImageConfig.NONE), null);
        store.save(named);
        assertThat(Files.readString(root.resolve("0123456789ab/sandbox.json"))).as("written as before architectures")
                .contains("tools:1").doesNotContain("arch");
        assertThat(store.loadAll(p -> { })).containsExactly(named);
        dev.kosa8.vm.GuestArch other = dev.kosa8.vm.GuestArch.host() == dev.kosa8.vm.GuestArch.AMD64
                ? dev.kosa8.vm.GuestArch.ARM64 : dev.kosa8.vm.GuestArch.AMD64;
        SandboxRecord foreign = new SandboxRecord(r.id(), r.created(), r.ephemeral(), r.cpus(), r.memoryMiB(),
                r.accelerator(), r.imageId(), r.state(), r.qemuPid(), r.qemuStarted(), r.failure(), r.workspace(),
                r.network(), r.secrets(), r.workspaceTransport(),
                new SandboxImage(SandboxImage.DEFAULT.name(), dev.kosa8.image.ImageConfig.NONE, other), null);
        store.save(foreign);
        assertThat(Files.readString(root.resolve("0123456789ab/sandbox.json"))).contains("\"arch\"");
        assertThat(store.loadAll(p -> { })).singleElement()
                .satisfies(back -> assertThat(back.image().arch()).isEqualTo(other));
    }

    @Test
    void publishedPortsAreKeptWithTheirHostPortsAndARecordWithoutThemSaysNothingOfThem() throws Exception {
        SandboxStore store = new SandboxStore(root);
        var ports = List.of(dev.kosa8.ports.PortMapping.loopback(8000, 41234),
                new dev.kosa8.ports.PortMapping(80, "0.0.0.0", 8080));
        store.save(record("0123456789ab").withPorts(ports));
        assertThat(store.loadAll(p -> { })).singleElement().satisfies(r -> {
            assertThat(r.ports()).isEqualTo(ports);
            assertThat(r.stopped().ports()).as("a stop keeps them").isEqualTo(ports);
            assertThat(r.failed("x").withState(SandboxState.RUNNING).ports()).isEqualTo(ports);
        });
        store.save(record("0123456789ab"));
        assertThat(Files.readString(root.resolve("0123456789ab/sandbox.json"))).doesNotContain("ports");
        assertThat(store.loadAll(p -> { })).singleElement().satisfies(r -> assertThat(r.ports()).isEmpty());
    }

    /** sandbox.json exactly as kosa8 wrote it before the envelope moved to dev.kosa8.host.RecordFile. */
    private static final String EARLIER = """
            {
              "format" : "kosa8-sandbox",
              "version" : 1,
              "sandbox" : {
                "id" : "0123456789ab",
                "created" : "2026-11-29T10:00:00Z",
                "ephemeral" : false,
                "cpus" : 2,
                "memoryMiB" : 1024,
                "accelerator" : "tcg",
                "imageId" : "img",
                "state" : "RUNNING",
                "qemuPid" : 1234,
                "qemuStarted" : "2026-11-29T10:00:01Z",
                "failure" : "",
                "workspace" : "/home/ann/café",
                "network" : {
                  "mode" : "CLOSED",
                  "allow" : [ "pypi.org", "GET api.example.com/v1/" ]
                },
                "secrets" : [ {
                  "name" : "OPENAI_API_KEY",
                  "env" : "OPENAI_API_KEY",
                  "sentinel" : "sk-proj-5qHbW2xV9kLmN3pR7tY1zA4c"
                } ],
                "workspaceTransport" : "RELAY"
              },
              "sha256" : "1385a120b75618f2831b74628af69070ef5fbb5944eea30bfc6d6562fb79ecc8"
            }""";

    @Test
    void aRecordAsEarlierVersionsWroteItLoadsAndIsWrittenTheSameWay() throws Exception {
        SandboxRecord r = new SandboxRecord("0123456789ab", Instant.parse("2026-11-29T10:00:00Z"), false, 2, 1024,
                "tcg", "img", SandboxState.RUNNING, 1234, Instant.parse("2026-11-29T10:00:01Z"), "",
                "/home/ann/caf\u00e9", record("0123456789ab").network(), record("0123456789ab").secrets(),
                dev.kosa8.vm.WorkspaceTransport.RELAY);
        Path f = Files.createDirectories(root.resolve("0123456789ab")).resolve("sandbox.json");
        Files.writeString(f, EARLIER.stripTrailing());
        List<String> problems = new ArrayList<>();
        assertThat(new SandboxStore(root).loadAll(problems::add)).containsExactly(r);
        assertThat(problems).isEmpty();
        new SandboxStore(root).save(r);
        assertThat(Files.readString(f)).isEqualTo(EARLIER.stripTrailing());
    }

    @Test
    void aRecordWithoutTheEnvelopeIsNotASandboxRecord() throws Exception {
        Path f = Files.createDirectories(root.resolve("0123456789ab")).resolve("sandbox.json");
        Files.write(f, SandboxStore.JSON.writeValueAsBytes(record("0123456789ab")));
        List<String> problems = new ArrayList<>();
        assertThat(new SandboxStore(root).loadAll(problems::add)).isEmpty();
        assertThat(problems).singleElement().asString().startsWith(f + " is damaged: it has no format name")
                .contains("remove the directory the file is in");
    }

    @Test
    void skipsATamperedOrTruncatedRecordAndSaysWhy() throws Exception {
        SandboxStore store = new SandboxStore(root);
        store.save(record("0123456789ab"));
        store.save(record("ba9876543210"));
        Path f = root.resolve("0123456789ab/sandbox.json");
        Files.writeString(f, Files.readString(f).replace("\"cpus\" : 2", "\"cpus\" : 64"));
        Path g = root.resolve("ba9876543210/sandbox.json");
        Files.writeString(g, Files.readString(g).substring(0, 40));
        List<String> problems = new ArrayList<>();
        assertThat(store.loadAll(problems::add)).isEmpty();
        assertThat(problems).hasSize(2).anyMatch(p -> p.contains("checksum mismatch"));
    }

    @Test
    void idsCannotNamePathsOutsideTheStore() {
        SandboxStore store = new SandboxStore(root);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.directory("../../etc"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(SandboxIds.isValid(SandboxIds.newId())).isTrue();
        assertThat(SandboxIds.isValid("0123456789AB")).isFalse();
    }
}
