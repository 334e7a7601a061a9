package dev.kosa8.secrets;

import java.util.Objects;

/**
 * A secret a sandbox was given, as its record keeps it: never the value, only
 * the placeholder its guest holds in environment variable {@code env}. The
 * placeholder is drawn once per sandbox and secret and kept, so a restarted
 * daemon, a stopped and started sandbox and the guest's running processes
 * all agree on it.
 */
public record GrantedSecret(String name, String env, String sentinel) {
    public GrantedSecret {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(sentinel, "sentinel");
    }
}
