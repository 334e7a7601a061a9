package dev.kosa8.secrets;

import java.util.Optional;

/**
 * Where secret values live, by name: a file only the user can read, the
 * desktop's Secret Service, or the macOS keychain. Only values go here; what
 * each secret is for is in the catalog ({@link SecretStore}), which every
 * backend shares, so {@code kosa8 secret ls} never has to unlock a keyring.
 *
 * <p>Implementations never put a value on a command line: a process's
 * arguments are readable by every user through {@code /proc}. Writers are
 * serialized by {@link SecretStore}'s lock.
 */
interface SecretValues {
    /** The name recorded in {@link SecretSpec#store()}: {@code file}, {@code secret-service} or {@code keychain}. */
    String id();

    /** Where the values are, for people: {@code kosa8 secret set} and {@code kosa8 doctor} print it. */
    String description();

    void put(String name, String value);

    Optional<String> get(String name);

    /** Removes the value; nothing happens when there is none. */
    void remove(String name);
}
