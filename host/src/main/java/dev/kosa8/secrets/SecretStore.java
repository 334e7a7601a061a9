package dev.kosa8.secrets;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The user's API keys, kept on the host: the catalog of {@link SecretSpec}s
 * ({@code secrets.json} in kosa8's config directory) and the values in a
 * backend (a 0600 file, the Secret Service or the macOS keychain; see
 * {@link SecretBackends}). A sandbox never sees a value, only a
 * {@link Sentinels sentinel}; the egress broker asks this store for the value
 * when it puts the key into a request to the secret's host.
 *
 * <p>The CLI's {@code kosa8 secret} commands use the store directly, not
 * through the daemon, so two of them may run at once (and the daemon may read
 * meanwhile). Changes happen under a lock file ({@code secrets.lock}) around
 * the whole read-modify-write of the catalog and the value; readers need no
 * lock, since every file is replaced by an atomic rename.
 */
public final class SecretStore {
    public static final int MIN_LENGTH = 8;
    public static final int MAX_LENGTH = 4096;
    static final String LOCK = "secrets.lock";
    /** File locks belong to the whole JVM, which may not take one twice: threads queue here first. */
    private static final Object IN_PROCESS = new Object();

    private final Path directory;
    private final SecretBackends backends;
    private final SecretCatalog catalog;
    private SecretBackends.Choice choice;

    /**
     * A store in {@code directory}, choosing backends by {@code env}
     * ({@code KOSA8_SECRET_STORE}, and {@code DBUS_SESSION_BUS_ADDRESS} for
     * the Secret Service).
     */
    public SecretStore(Path directory, Map<String, String> env) {
        this(directory, new SecretBackends(directory, env));
    }

    SecretStore(Path directory, SecretBackends backends) {
        this.directory = directory;
        this.backends = backends;
        this.catalog = new SecretCatalog(directory);
    }

    /** The user's store, in kosa8's config directory ({@link HostPaths#config()}). */
    public static SecretStore open() {
        return new SecretStore(HostPaths.config(), System.getenv());
    }

    public Path directory() {
        return directory;
    }

    /** The backend new secrets go to: the {@link SecretSpec#store()} that {@code kosa8 secret set} records. */
    public String defaultStore() {
        return choice().values().id();
    }

    /** Where new secrets go and why, for people: "file ~/.config/kosa8/secret-values.json (0600): no Secret Service: ...". */
    public String backendDescription() {
        SecretBackends.Choice c = choice();
        return c.values().description() + ": " + c.why();
    }

    /**
     * Stores {@code value} in the backend that {@code spec} names and records
     * the spec, replacing any secret of that name (whose value is removed from
     * its old backend, if that was another one).
     */
    public void set(SecretSpec spec, String value) {
        checkValue(spec.name(), value);
        locked(() -> {
            Map<String, SecretSpec> specs = catalog.read();
            SecretSpec old = specs.get(spec.name());
            backends.forReading(spec.store()).put(spec.name(), value);
            dev.kosa8.host.CrashPoints.reached("secret-set", "value");
            specs.put(spec.name(), spec);
            catalog.write(specs.values());
            dev.kosa8.host.CrashPoints.reached("secret-set", "catalog");
            if (old != null && !old.store().equals(spec.store())) {
                try {
                    backends.forReading(old.store()).remove(old.name());
                } catch (KosaException e) {
                    // The old backend is out of reach now; its copy stays where the user put it before.
                }
            }
            return null;
        });
    }

    /** All secrets by name; never their values. */
    public List<SecretSpec> list() {
        return List.copyOf(catalog.read().values());
    }

    public Optional<SecretSpec> spec(String name) {
        return Optional.ofNullable(catalog.read().get(name));
    }

    /** The value of the secret {@code name}, from the backend its spec records. */
    public String value(String name) {
        SecretSpec spec = spec(name).orElseThrow(() -> new KosaException(KosaException.Kind.USAGE,
                "no secret named " + name, "set it with `kosa8 secret set " + name + " --host HOST`"));
        SecretValues values = backends.forReading(spec.store());
        return values.get(name).orElseThrow(() -> new KosaException(
                KosaException.Kind.HOST, "secret " + name + " is listed, but its value is missing from "
                        + values.description(),
                "set it again: kosa8 secret set " + name + " --host " + spec.authority()));
    }

    /** Removes the secret and its value. */
    public void remove(String name) {
        locked(() -> {
            Map<String, SecretSpec> specs = catalog.read();
            SecretSpec spec = specs.get(name);
            if (spec == null) {
                throw new KosaException(KosaException.Kind.USAGE, "no secret named " + name,
                        "`kosa8 secret ls` lists the secrets");
            }
            backends.forReading(spec.store()).remove(name);
            specs.remove(name);
            catalog.write(specs.values());
            return null;
        });
    }

    /**
     * A value must fit in an HTTP header as it is: printable ASCII without
     * spaces (no line break can sneak a second header in), and of a length
     * that real keys have. The message never shows the value.
     */
    static void checkValue(String name, String value) {
        if (value == null || value.length() < MIN_LENGTH || value.length() > MAX_LENGTH) {
            throw new KosaException(KosaException.Kind.USAGE, "the value of " + name + " has "
                    + (value == null ? 0 : value.length()) + " characters; API keys have " + MIN_LENGTH + " to "
                    + MAX_LENGTH, "pipe the whole key in: printf %s \"$KEY\" | kosa8 secret set " + name
                    + " --host HOST");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                String what = c == ' ' ? "a space" : c == '\n' || c == '\r' ? "a line break"
                        : c < 0x20 || c == 0x7f ? "a control character" : "a non-ASCII character";
                throw new KosaException(KosaException.Kind.USAGE, "the value of " + name + " has " + what
                        + " at position " + (i + 1) + ": a key goes into an HTTP header, which takes printable "
                        + "ASCII only", "check what you piped in (one trailing newline is dropped, nothing else)");
            }
        }
    }

    private SecretBackends.Choice choice() {
        if (choice == null) {
            choice = backends.forNewSecrets();
        }
        return choice;
    }

    private <T> T locked(Supplier<T> change) {
        synchronized (IN_PROCESS) {
            try (FileChannel ch = PrivateFile.lockFile(directory.resolve(LOCK)); FileLock _ = ch.lock()) {
                return change.get();
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot lock " + directory.resolve(LOCK) + ": "
                        + e.getMessage(), "check that " + directory + " is yours and writable", e);
            }
        }
    }
}
