package dev.kosa8.it;

import java.time.Duration;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Hands a test class one booted sandbox (lifecycle stage: running), shared by
 * all its tests, so a class pays for one boot under TCG. Removed after the
 * class, whatever happened.
 */
public final class SharedSandbox implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
    /** A running sandbox: its id and the host folder it shares (empty, made for the class). */
    public record Booted(String id, java.nio.file.Path workspace) {
        public Kosa.Result exec(String... command) {
            return exec(Duration.ofMinutes(2), command);
        }

        public Kosa.Result exec(Duration timeout, String... command) {
            String[] args = new String[command.length + 3];
            args[0] = "exec";
            args[1] = id;
            args[2] = "--";
            System.arraycopy(command, 0, args, 3, command.length);
            return Kosa.run(timeout, args);
        }
    }

    /** More arguments of {@code kosa8 create} for the class's sandbox. */
    @java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
    @java.lang.annotation.Target(java.lang.annotation.ElementType.TYPE)
    public @interface CreateArgs {
        String[] value();
    }

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SharedSandbox.class);

    @Override
    public void beforeAll(ExtensionContext ctx) {
        java.nio.file.Path folder = Kosa.HOME.resolveSibling("it-workspaces")
                .resolve(ctx.getRequiredTestClass().getSimpleName());
        try {
            if (java.nio.file.Files.exists(folder)) {
                Kosa.deleteTree(folder);
            }
            java.nio.file.Files.createDirectories(folder);
            folder = folder.toRealPath();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("create", "--workspace",
                folder.toString()));
        CreateArgs extra = ctx.getRequiredTestClass().getAnnotation(CreateArgs.class);
        if (extra != null) {
            args.addAll(java.util.List.of(extra.value()));
        }
        Kosa.Result r = Kosa.ok(Duration.ofMinutes(15), args.toArray(String[]::new));
        String id = r.stdout().strip();
        ctx.getStore(NS).put("sandbox", new Booted(id, folder));
    }

    @Override
    public void afterAll(ExtensionContext ctx) {
        Booted b = ctx.getStore(NS).get("sandbox", Booted.class);
        if (b != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", b.id());
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == Booted.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        return e.getStore(NS).get("sandbox", Booted.class);
    }
}
