package dev.kosa8.cli;

import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.SecretSpec;
import dev.kosa8.secrets.SecretStore;
import java.io.InputStream;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code kosa8 secret}: API keys kept on this machine. These commands use the
 * store directly rather than through the daemon, so a key never crosses the
 * daemon's socket on its way in.
 */
@Command(name = "secret", mixinStandardHelpOptions = true,
        description = {"Keep API keys on this machine, out of the sandboxes.",
            "A sandbox sees only a placeholder of the same shape; kosa8's network broker puts the real key into "
                    + "requests to the one host it is for.",
            "",
            "  printf %%s \"$KEY\" | kosa8 secret set OPENAI_API_KEY --host api.openai.com",
            "  kosa8 secret ls",
            "  kosa8 run --secret OPENAI_API_KEY -- python3 agent.py",
            "  kosa8 secret rm OPENAI_API_KEY",
            ""},
        subcommands = {SecretCommand.Set.class, SecretCommand.Ls.class, SecretCommand.Rm.class,
            SecretGrantCommand.class, SecretRevokeCommand.class})
final class SecretCommand {
    @ParentCommand
    Main main;

    /** Where the secrets are: the user's store, or a test's. */
    Supplier<SecretStore> stores = SecretStore::open;
    /** The key's source when standard input is not a terminal. */
    Supplier<InputStream> stdin = () -> System.in;

    /**
     * A changed or removed key reaches running sandboxes' brokers at once. Only
     * when the daemon already runs: with none, no sandbox runs either, and the
     * next broker reads the store when it starts.
     */
    void reloadRunningSandboxes() {
        if (main == null) {
            return; // a test driving the command on its own
        }
        DaemonClient d = new DaemonClient(main.paths);
        if (d.isUp()) {
            try {
                d.post("/v1/secrets/reload");
            } catch (KosaException e) {
                System.err.println("kosa8: stored, but running sandboxes keep the old key until they restart: "
                        + e.getMessage());
            }
        }
    }

    @Command(name = "set", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Keep an API key for one host. Sandboxes started with --secret NAME get a placeholder in "
                    + "$NAME (or --env); requests to HOST carry the real key in the header.",
                "The key is read from standard input (a pipe or a file), or typed twice without echo at a terminal. "
                        + "There is no option for it: every user of this machine can read a command's arguments."},
            footer = {"", "Examples:",
                "  printf %%s \"$KEY\" | kosa8 secret set OPENAI_API_KEY --host api.openai.com",
                "  kosa8 secret set ANTHROPIC_API_KEY --host api.anthropic.com \\",
                "      --header 'x-api-key: {}' < ~/anthropic.key",
                "  kosa8 secret set GH_TOKEN --host api.github.com     (asks for the key)",
                "",
                "One trailing newline is dropped. Where keys are kept: the desktop keyring (Secret Service, macOS "
                        + "keychain) when there is one, else a 0600 file; KOSA8_SECRET_STORE=file|secret-service|keychain "
                        + "decides instead. Then: kosa8 run --secret OPENAI_API_KEY -- python3 agent.py"})
    static final class Set implements Callable<Integer> {
        @ParentCommand
        SecretCommand parent;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME",
                description = "The secret's name: letters, digits and _. Also the sandbox's variable unless --env.")
        String name;

        @Option(names = "--host", required = true, paramLabel = "HOST[:PORT]",
                description = "The one host the key is sent to (port 443 unless given). No wildcards, no addresses.")
        String host;

        @Option(names = "--header", paramLabel = "'NAME: VALUE'",
                description = "How the key is sent; {} is the key. Default: 'Authorization: Bearer {}'.")
        String header;

        @Option(names = "--env", paramLabel = "VAR", description = "The variable that holds the placeholder in a "
                + "sandbox. Default: NAME.")
        String env;

        @Override
        public Integer call() {
            SecretStore store = parent.stores.get();
            SecretSpec s;
            try {
                s = SecretSpec.of(name, host, header, env, Instant.now(), store.defaultStore());
            } catch (IllegalArgumentException e) {
                throw new KosaException(KosaException.Kind.USAGE, e.getMessage(), "see kosa8 secret set --help");
            }
            String value = SecretInput.read(name, parent.stdin);
            store.set(s, value);
            PrintWriter out = spec.commandLine().getOut();
            out.println("Stored " + s.name() + " in " + store.backendDescription() + ".");
            out.println("It is sent only to " + s.authority() + ", as '" + s.headerName() + ": "
                    + s.headerValue("<key>") + "'.");
            out.println("Sandboxes get a placeholder in $" + s.env() + ": kosa8 run --secret " + s.name() + " -- ...");
            out.flush();
            parent.reloadRunningSandboxes();
            return 0;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true,
            description = {"List the secrets: what each is for and where it is kept. Never the keys.",
                "Example: kosa8 secret ls"})
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        SecretCommand parent;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            List<SecretSpec> secrets = parent.stores.get().list();
            PrintWriter out = spec.commandLine().getOut();
            if (secrets.isEmpty()) {
                PrintWriter err = spec.commandLine().getErr();
                err.println("No secrets yet. Add one with: printf %s \"$KEY\" | kosa8 secret set NAME --host HOST");
                err.flush();
                return 0;
            }
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {"NAME", "HOST", "HEADER", "ENV", "STORE", "SET"});
            for (SecretSpec s : secrets) {
                rows.add(new String[] {s.name(), s.authority(), s.header(), s.env(), s.store(),
                    LsCommand.ago(s.setAt().toString())});
            }
            print(out, rows);
            out.flush();
            return 0;
        }

        private static void print(PrintWriter out, List<String[]> rows) {
            int[] width = new int[rows.getFirst().length];
            for (String[] r : rows) {
                for (int i = 0; i < r.length; i++) {
                    width[i] = Math.max(width[i], r[i].length());
                }
            }
            for (String[] r : rows) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < r.length; i++) {
                    line.append(i == r.length - 1 ? r[i] : String.format("%-" + width[i] + "s  ", r[i]));
                }
                out.println(line);
            }
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = {"Remove secrets and their keys from this machine.",
                "Example: kosa8 secret rm OPENAI_API_KEY"})
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        SecretCommand parent;

        @Spec
        CommandSpec spec;

        @Parameters(arity = "1..*", paramLabel = "NAME", description = "The secrets to remove.")
        List<String> names;

        @Override
        public Integer call() {
            SecretStore store = parent.stores.get();
            PrintWriter out = spec.commandLine().getOut();
            for (String n : names) {
                store.remove(n);
                out.println("Removed " + n + ".");
                out.flush();
            }
            parent.reloadRunningSandboxes();
            return 0;
        }
    }
}
