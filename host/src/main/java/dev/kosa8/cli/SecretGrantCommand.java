package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "grant", mixinStandardHelpOptions = true,
        description = {"Give a running (or stopped) sandbox secrets from the store, at once.",
                "Each secret's host joins its allow-list; commands started from now on see the placeholder in the "
                        + "secret's variable, and the broker puts the real key into HTTPS requests to that host.",
                "Example: kosa8 secret grant 3f2a OPENAI_API_KEY"})
final class SecretGrantCommand implements Callable<Integer> {
    @ParentCommand
    SecretCommand secret;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "NAME", description = "Secrets, as `kosa8 secret ls` names them.")
    List<String> names;

    @Override
    public Integer call() {
        print(secret.main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/secrets/grant" + query(names)));
        return 0;
    }

    static String query(List<String> names) {
        StringBuilder q = new StringBuilder();
        for (String n : names) {
            q.append(q.isEmpty() ? "?" : "&").append("name=").append(SandboxOptions.enc(n));
        }
        return q.toString();
    }

    /** The sandbox's secrets after the change: name and variable, never a value. */
    static void print(JsonNode r) {
        JsonNode all = r.path("secrets");
        if (all.isEmpty()) {
            System.out.println("no secrets");
            return;
        }
        for (JsonNode s : all) {
            System.out.println(s.path("name").asText() + "\t$" + s.path("env").asText());
        }
    }
}
