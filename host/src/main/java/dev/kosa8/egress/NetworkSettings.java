package dev.kosa8.egress;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.egress.tls.HostCas;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The user's own network settings, {@value #FILE} in kosa8's config
 * directory on the host:
 *
 * <pre>{"addressExceptions": {"deb.debian.org": ["203.0.113.0/24"],      // names dialed at refused blocks
 *                         "*.corp.example": ["10.20.0.0/16"]},
 *  "trustHostCas": false,                  // the default of --trust-host-cas for new sandboxes
 *  "hostCaFiles": ["/etc/company/ca.pem"]} // more CA files, besides the distribution's local CA folders</pre>
 *
 * Read again whenever a broker starts and a sandbox is made, so an edit
 * reaches the next one without a daemon restart. Nothing here can come from
 * a guest: the file is the host user's, and a broker refuses to start while
 * kosa8's config directory or a CA file it names lies inside any sandbox's
 * workspace ({@link #refuseInside}). An address exception allows no host by
 * itself; it only lets a host the allow-list already allows be dialed at the
 * blocks it names.
 *
 * @param exceptions   the address exceptions
 * @param trustHostCas whether new sandboxes trust the host's CAs when {@code --trust-host-cas} is not given
 * @param hostCaFiles  CA files trusted besides {@link HostCas#LOCAL_DIRECTORIES}
 * @param guarded      what a guest must never be able to write: the config directory and the CA files
 */
public record NetworkSettings(AddressExceptions exceptions, boolean trustHostCas, List<Path> hostCaFiles,
                              List<Path> guarded) {
    public static final String FILE = "network.json";
    public static final NetworkSettings NONE = new NetworkSettings(AddressExceptions.NONE, false, List.of(), List.of());
    private static final Set<String> KEYS = Set.of("addressExceptions", "trustHostCas", "hostCaFiles");

    public NetworkSettings {
        hostCaFiles = List.copyOf(hostCaFiles);
        guarded = List.copyOf(guarded);
    }

    /** The settings in {@code configDir}/{@value #FILE}; none when it does not exist. */
    public static NetworkSettings load(Path configDir) {
        Path file = configDir.resolve(FILE);
        List<Path> guarded = new ArrayList<>(List.of(configDir));
        if (!Files.exists(file)) {
            return new NetworkSettings(AddressExceptions.NONE, false, List.of(), guarded);
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw bad(file, "it is not JSON: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw bad(file, "it must be a JSON object");
        }
        List<String> problems = new ArrayList<>();
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!KEYS.contains(k)) {
                problems.add("unknown setting '" + k + "' (the settings are " + String.join(", ", KEYS.stream()
                        .sorted().toList()) + ")");
            }
        }
        List<AddressException> exceptions = new ArrayList<>();
        JsonNode ex = root.path("addressExceptions");
        if (!ex.isMissingNode() && !ex.isObject()) {
            problems.add("addressExceptions must be an object of host names to lists of address blocks");
        }
        for (Map.Entry<String, JsonNode> e : ex.properties()) {
            List<String> ranges = new ArrayList<>();
            if (e.getValue().isArray()) {
                e.getValue().forEach(v -> ranges.add(v.asText()));
            } else {
                problems.add("addressExceptions." + e.getKey() + " must be a list of address blocks");
                continue;
            }
            try {
                exceptions.add(AddressException.parse(e.getKey(), ranges));
            } catch (IllegalArgumentException x) {
                problems.add("addressExceptions." + e.getKey() + ": " + x.getMessage());
            }
        }
        JsonNode trust = root.path("trustHostCas");
        if (!trust.isMissingNode() && !trust.isBoolean()) {
            problems.add("trustHostCas must be true or false");
        }
        List<Path> caFiles = new ArrayList<>();
        JsonNode cas = root.path("hostCaFiles");
        if (!cas.isMissingNode() && !cas.isArray()) {
            problems.add("hostCaFiles must be a list of absolute paths");
        }
        cas.forEach(v -> {
            Path p = Path.of(v.asText());
            if (!p.isAbsolute()) {
                problems.add("hostCaFiles: " + v.asText() + " is not an absolute path");
            } else {
                caFiles.add(p);
            }
        });
        if (!problems.isEmpty()) {
            throw bad(file, String.join("; ", problems));
        }
        guarded.addAll(caFiles);
        return new NetworkSettings(new AddressExceptions(exceptions), trust.asBoolean(false), caFiles, guarded);
    }

    private static KosaException bad(Path file, String why) {
        return new KosaException(KosaException.Kind.USAGE, "cannot use the network settings " + file + ": " + why,
                "fix the file (docs/network.md, \"Your own settings\"), or remove it");
    }

    /** The host's CAs these settings trust: the distribution's local CA folders and {@link #hostCaFiles}. */
    public HostCas hostCas() {
        return HostCas.local(hostCaFiles);
    }

    /**
     * Refuses when kosa8's config directory or a CA file these settings name lies inside {@code workspace}, a
     * folder a guest can write (compared as real paths, so links do not hide it): the guest could otherwise give
     * itself address exceptions, presets or trusted CAs.
     */
    public void refuseInside(Path workspace, String sandboxId) {
        refuseInside(workspace, "the workspace of sandbox " + sandboxId, "give that sandbox another workspace (`kosa8 rm "
                + sandboxId + "`), or keep kosa8's config directory and CA files outside every workspace");
    }

    /** As {@link #refuseInside(Path, String)}, for the folder a sandbox about to be made would share. */
    public void refuseInNew(Path workspace) {
        refuseInside(workspace, "the folder the new sandbox would share", "give it another folder (`--workspace "
                + "DIR`, or `--workspace none`), or keep kosa8's config directory and CA files outside it");
    }

    private void refuseInside(Path workspace, String whose, String remedy) {
        if (workspace == null || workspace.toString().isEmpty()) {
            return;
        }
        RealPaths.firstInside(guarded, workspace).ifPresent(f -> {
            throw new KosaException(KosaException.Kind.USAGE, "kosa8's network settings read " + f
                    + ", which is inside " + whose + " (" + workspace
                    + "): its guest could change them and open its own network", remedy);
        });
    }
}
