package dev.kosa8.secrets;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Which backend holds secret values: for a new secret, the one
 * {@code KOSA8_SECRET_STORE} names ({@code auto}, the default, takes the
 * keychain on macOS, the Secret Service where a desktop session offers one,
 * else the file); for an existing secret, the one its spec records, because
 * the value is there and nowhere else, whatever the environment says today.
 */
final class SecretBackends {
    static final String ENV = "KOSA8_SECRET_STORE";
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(3);

    /** The backend for new secrets, and why it was taken: {@code kosa8 doctor} prints both. */
    record Choice(SecretValues values, String why) {
    }

    private final Path directory;
    private final Map<String, String> env;
    private final String osName;
    private final Function<Map<String, String>, String> secretServiceProblem;

    SecretBackends(Path directory, Map<String, String> env) {
        this(directory, env, System.getProperty("os.name", ""), e -> SecretServiceValues.problem(e, PROBE_TIMEOUT));
    }

    /** @param secretServiceProblem why the Secret Service cannot be used, or null when it can */
    SecretBackends(Path directory, Map<String, String> env, String osName,
            Function<Map<String, String>, String> secretServiceProblem) {
        this.directory = directory;
        this.env = Map.copyOf(env);
        this.osName = osName;
        this.secretServiceProblem = secretServiceProblem;
    }

    Choice forNewSecrets() {
        String wanted = env.getOrDefault(ENV, "auto").strip().toLowerCase(Locale.ROOT);
        switch (wanted) {
            case "", "auto" -> {
                return auto();
            }
            case FileSecretValues.ID -> {
                return new Choice(file(), ENV + "=file");
            }
            case SecretServiceValues.ID -> {
                String problem = secretServiceProblem.apply(env);
                if (problem != null) {
                    throw new KosaException(KosaException.Kind.HOST, ENV + "=secret-service, but the Secret Service "
                            + "cannot be used: " + problem, "run kosa8 in your desktop session, or unset " + ENV
                            + " to let kosa8 choose");
                }
                return new Choice(secretService(), ENV + "=secret-service");
            }
            case KeychainValues.ID -> {
                String problem = keychainProblem();
                if (problem != null) {
                    throw new KosaException(KosaException.Kind.HOST, ENV + "=keychain, but " + problem,
                            "unset " + ENV + " to let kosa8 choose");
                }
                return new Choice(new KeychainValues(), ENV + "=keychain");
            }
            default -> throw new KosaException(KosaException.Kind.USAGE, "unknown " + ENV + "=" + wanted,
                    "set it to auto, file, secret-service or keychain (or unset it: auto)");
        }
    }

    /** The backend a stored secret names, or an error that says why this process cannot reach it. */
    SecretValues forReading(String id) {
        return switch (id) {
            case FileSecretValues.ID -> file();
            case SecretServiceValues.ID -> {
                String problem = SecretServiceValues.unreachable(env);
                if (problem != null) {
                    throw new KosaException(KosaException.Kind.HOST, "the Secret Service cannot be reached from here: "
                            + problem, "run kosa8 (and so its daemon: `kosa8 daemon stop` first) from your desktop "
                            + "session, or set the secret again with KOSA8_SECRET_STORE=file");
                }
                yield secretService();
            }
            case KeychainValues.ID -> {
                String problem = keychainProblem();
                if (problem != null) {
                    throw new KosaException(KosaException.Kind.HOST, "the macOS keychain cannot be reached: " + problem,
                            "set the secret again on this machine");
                }
                yield new KeychainValues();
            }
            default -> throw new KosaException(KosaException.Kind.HOST, "unknown secret store '" + id + "'",
                    "set the secret again with `kosa8 secret set`");
        };
    }

    private Choice auto() {
        if (isMac()) {
            String problem = keychainProblem();
            if (problem == null) {
                return new Choice(new KeychainValues(), "macOS");
            }
            return new Choice(file(), problem);
        }
        String problem = secretServiceProblem.apply(env);
        if (problem == null) {
            return new Choice(secretService(), "one answers on this D-Bus session");
        }
        return new Choice(file(), "no Secret Service: " + problem);
    }

    private String keychainProblem() {
        if (!isMac()) {
            return "the keychain is on macOS only";
        }
        if (!Files.isExecutable(Path.of(KeychainValues.SECURITY))) {
            return KeychainValues.SECURITY + " is missing";
        }
        return null;
    }

    private boolean isMac() {
        return osName.toLowerCase(Locale.ROOT).startsWith("mac");
    }

    private FileSecretValues file() {
        return new FileSecretValues(directory);
    }

    private SecretServiceValues secretService() {
        return new SecretServiceValues(env);
    }
}
