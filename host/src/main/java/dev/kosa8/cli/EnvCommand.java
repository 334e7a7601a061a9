package dev.kosa8.cli;

import dev.kosa8.client.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "env", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Show or change a sandbox's own environment variables: every command run in it afterwards "
                + "gets them (exec, shell, exec -d), over the image's variables and under the command's own -e. "
                + "Kept with the sandbox; a rewind leaves them as they are. Secrets are not for this: "
                + "`kosa8 secret` keeps them out of the sandbox."},
        footer = {"", "Examples:", "  kosa8 env ID", "  kosa8 env ID LANG=C.UTF-8 PIP_INDEX_URL=https://pypi.org/simple",
            "  kosa8 env ID -u PIP_INDEX_URL"})
final class EnvCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox (its id or a unique prefix).")
    String id;

    @Parameters(index = "1..*", paramLabel = "NAME=VALUE", description = "Variables to set.")
    List<String> set = new ArrayList<>();

    @Option(names = {"-u", "--unset"}, paramLabel = "NAME", description = "A variable to remove (repeatable).")
    List<String> unset = new ArrayList<>();

    @Override
    public Integer call() {
        String path = "/v1/sandboxes/" + Ids.check(id) + "/env";
        Object r;
        if (set.isEmpty() && unset.isEmpty()) {
            r = main.daemon().call("GET", path);
        } else {
            StringBuilder q = new StringBuilder();
            set.forEach(v -> q.append(q.isEmpty() ? "?" : "&").append("set=").append(SandboxOptions.enc(v)));
            unset.forEach(v -> q.append(q.isEmpty() ? "?" : "&").append("unset=").append(SandboxOptions.enc(v)));
            r = main.daemon().call("POST", path + q);
        }
        if (Json.get(r, "env") instanceof Map<?, ?> env) {
            env.forEach((k, v) -> System.out.println(k + "=" + v));
        }
        return 0;
    }
}
