package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.secrets.SecretStore;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class SecretCommandTest {
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** Runs {@code kosa8 ARGS} against a file store in the temp dir, {@code stdin} piped in. */
    private int kosa8(String stdin, String... args) {
        CommandLine cl = Main.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        SecretCommand secret = cl.getSubcommands().get("secret").getCommand();
        secret.stores = () -> new SecretStore(dir, Map.of("KOSA8_SECRET_STORE", "file"));
        secret.stdin = () -> new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8));
        return cl.execute(args);
    }

    @Test
    void setsFromStandardInputListsAndRemoves() throws Exception {
        assertThat(kosa8("sk-proj-abcdefgh\n", "secret", "set", "OPENAI_API_KEY", "--host", "api.openai.com"))
                .isZero();
        assertThat(out.toString()).contains("Stored OPENAI_API_KEY in file ").contains("KOSA8_SECRET_STORE=file")
                .contains("sent only to api.openai.com, as 'Authorization: Bearer <key>'")
                .contains("kosa8 run --secret OPENAI_API_KEY").doesNotContain("sk-proj-abcdefgh");
        assertThat(new SecretStore(dir, Map.of()).value("OPENAI_API_KEY")).isEqualTo("sk-proj-abcdefgh");

        assertThat(kosa8("sk-ant-api03-xyz\r\n", "secret", "set", "anthropic", "--host", "api.anthropic.com:8443",
                "--header", "x-api-key: {}", "--env", "ANTHROPIC_API_KEY")).isZero();
        assertThat(new SecretStore(dir, Map.of()).value("anthropic")).isEqualTo("sk-ant-api03-xyz");

        out.getBuffer().setLength(0);
        assertThat(kosa8("", "secret", "ls")).isZero();
        String[] lines = out.toString().split("\n");
        assertThat(lines[0]).matches("NAME +HOST +HEADER +ENV +STORE +SET");
        assertThat(lines[1]).matches("OPENAI_API_KEY +api\\.openai\\.com +Authorization: Bearer \\{} +OPENAI_API_KEY"
                + " +file +\\d+ s ago");
        assertThat(lines[2]).startsWith("anthropic ").contains("api.anthropic.com:8443").contains("x-api-key: {}")
                .contains("ANTHROPIC_API_KEY");
        assertThat(out.toString()).doesNotContain("sk-");

        assertThat(kosa8("", "secret", "rm", "OPENAI_API_KEY", "anthropic")).isZero();
        assertThat(out.toString()).contains("Removed OPENAI_API_KEY.").contains("Removed anthropic.");
        assertThat(Files.readString(dir.resolve("secret-values.json"))).doesNotContain("sk-");
        assertThat(kosa8("", "secret", "ls")).isZero();
        assertThat(err.toString()).contains("No secrets yet");
    }

    @Test
    void onlyOneTrailingNewlineIsDropped() {
        assertThat(SecretInput.stripOneNewline("abc\n\n")).isEqualTo("abc\n");
        assertThat(SecretInput.stripOneNewline("abc\r\n")).isEqualTo("abc");
        assertThat(SecretInput.stripOneNewline("abc")).isEqualTo("abc");
        assertThat(kosa8("sk-abcdefgh\n\n", "secret", "set", "K", "--host", "h.example")).isEqualTo(2);
        assertThat(err.toString()).contains("has a line break at position 12").doesNotContain("sk-abcdefgh");
    }

    @Test
    void badInputIsAUsageErrorThatSaysWhatToDo() {
        assertThat(kosa8("sk-abcdefgh", "secret", "set", "K", "--host", "*.openai.com")).isEqualTo(2);
        assertThat(err.toString()).contains("kosa8: host '*.openai.com' has a wildcard")
                .contains("→ see kosa8 secret set --help");
        assertThat(kosa8("", "secret", "set", "K", "--host", "h.example")).isEqualTo(2);
        assertThat(err.toString()).contains("no key came on standard input").contains("printf %s \"$KEY\" |");
        assertThat(kosa8("k".repeat(5000), "secret", "set", "K", "--host", "h.example")).isEqualTo(2);
        assertThat(err.toString()).contains("longer than 4096 characters");
        assertThat(kosa8("", "secret", "rm", "NOPE")).isEqualTo(2);
        assertThat(err.toString()).contains("no secret named NOPE");
        assertThat(kosa8("sk-abcdefgh", "secret", "set", "K")).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--host=HOST[:PORT]'");
        assertThat(new SecretStore(dir, Map.of()).list()).isEmpty();
    }

    @Test
    void helpTeachesHowToPipeTheKeyIn() {
        kosa8("", "secret", "set", "--help");
        assertThat(out.toString()).contains("  printf %s \"$KEY\" | kosa8 secret set OPENAI_API_KEY --host api.openai.com\n").contains("--header").contains("KOSA8_SECRET_STORE").doesNotContain("--value");
        kosa8("", "--help");
        assertThat(out.toString()).contains("secret");
    }
}
