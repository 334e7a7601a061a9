package dev.kosa8.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One running sandbox at a time for a test class whose tests share it where
 * they can but cannot all share one: {@link #running()} hands out the current
 * one, made on first use; {@link #justMade()} one made for the asking test
 * (from the booted template, no checkpoint, never rewound), the current one
 * removed first; a test that removes the sandbox itself says so with
 * {@link #removed()}. A test that fails may have left the sandbox in any state,
 * so the next test gets a new one rather than a cascade of failures. One guest
 * at a time leaves a 2-core machine's CPUs to the test's own guest. Register
 * it with {@code @RegisterExtension}; the last one is removed after the class,
 * whatever happened.
 */
final class ReplaceableSandbox implements AfterTestExecutionCallback, AfterAllCallback {
    private final Path folder;
    private final List<String> createArgs;
    private SharedSandbox.Booted current;

    /** Sandboxes sharing the folder {@code it-workspaces/<name>}, emptied for each, made with {@code createArgs} too. */
    ReplaceableSandbox(String name, String... createArgs) {
        this.folder = Kosa.HOME.resolveSibling("it-workspaces").resolve(name);
        this.createArgs = List.of(createArgs);
    }

    /** The class's running sandbox, made if there is none. */
    SharedSandbox.Booted running() throws java.io.IOException {
        if (current == null) {
            current = create();
        }
        return current;
    }

    /** A sandbox made for the asking test, which becomes the class's; the one before is removed. */
    SharedSandbox.Booted justMade() throws java.io.IOException {
        remove();
        current = create();
        return current;
    }

    /** The asking test removed the class's sandbox; the next test to ask gets a new one. */
    void removed() {
        current = null;
    }

    @Override
    public void afterTestExecution(ExtensionContext ctx) {
        if (ctx.getExecutionException().isPresent()) {
            remove();
        }
    }

    @Override
    public void afterAll(ExtensionContext ctx) {
        remove();
    }

    private void remove() {
        if (current != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", current.id());
            current = null;
        }
    }

    private SharedSandbox.Booted create() throws java.io.IOException {
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder);
        Path real = folder.toRealPath();
        List<String> args = new ArrayList<>(createArgs);
        args.addAll(0, List.of("create", "--workspace", real.toString()));
        String id = Kosa.ok(Duration.ofMinutes(15), args.toArray(String[]::new)).stdout().strip();
        return new SharedSandbox.Booted(id, real);
    }
}
