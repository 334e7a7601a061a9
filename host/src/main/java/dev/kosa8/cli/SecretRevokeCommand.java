package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "revoke", mixinStandardHelpOptions = true,
        description = {"Take secrets away from a sandbox, at once.",
                "The broker stops putting the keys into requests and new commands no longer see the placeholders. "
                        + "The hosts stay on the allow-list: `kosa8 deny ID HOST` closes them.",
                "Example: kosa8 secret revoke 3f2a OPENAI_API_KEY"})
final class SecretRevokeCommand implements Callable<Integer> {
    @ParentCommand
    SecretCommand secret;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "NAME", description = "Secrets the sandbox holds.")
    List<String> names;

    @Override
    public Integer call() {
        SecretGrantCommand.print(secret.main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/secrets/revoke"
                + SecretGrantCommand.query(names)));
        return 0;
    }
}
