package dev.kosa8.e2b;

import dev.kosa8.files.FileGuest;
import dev.kosa8.files.GuestFiles;
import dev.kosa8.processes.Guest;
import dev.kosa8.processes.ProcessInfo;
import dev.kosa8.processes.Processes;
import java.time.Instant;
import java.util.Optional;

/**
 * What the E2B listener needs of the daemon: kosa8 sandboxes made, found, paused (stopped to disk), resumed and
 * removed, their agents, and the processes the daemon keeps. The daemon implements it over its
 * {@code SandboxManager}; tests over a fake.
 */
public interface E2bBackend {
    /** A kosa8 sandbox as the listener sees it. */
    record Machine(String id, String image, State state, int cpus, int memoryMiB, Instant created) {
    }

    /** What E2B can tell of a kosa8 sandbox's state. */
    enum State {
        RUNNING, PAUSED, OTHER
    }

    /** Makes and boots a persistent sandbox from {@code image} (a kosa8 image name); answers its id. */
    String create(String image, int cpus, int memoryMiB);

    /** The sandbox, or empty when there is none by that id. */
    Optional<Machine> find(String id);

    /** Removes it, running or not. */
    void remove(String id);

    /** Stops it to disk: its machine saved as it runs. */
    void pause(String id);

    /** Resumes a paused one where it stopped. */
    void resume(String id);

    /** The agent of a running sandbox. */
    Guest guest(String id);

    /** The agent of a running sandbox, as file operations use it. */
    FileGuest fileGuest(String id);

    /** File operations in guests: stat, list, make dir, remove, rename, write, watch. */
    GuestFiles files();

    /** Starts a kept process with the sandbox's environment (its image's, its own, its secrets'). */
    ProcessInfo start(String id, Processes.Start start);

    /** The processes the daemon keeps. */
    Processes processes();
}
