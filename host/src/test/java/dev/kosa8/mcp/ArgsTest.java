package dev.kosa8.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ArgsTest {
    private static Args args(Map<String, Object> values) {
        return new Args("tool", values, Set.of("sandbox", "path", "content", "encoding", "n", "list", "env", "s",
                "process", "flag"));
    }

    private static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void anArgumentTheToolDoesNotKnowIsRefusedNamingTheOnesItDoes() {
        assertThatThrownBy(() -> args(map("sandbx", "abc")))
                .isInstanceOf(ToolError.class).hasMessage("tool has no argument 'sandbx'")
                .extracting(e -> ((ToolError) e).suggestion()).asString().contains("sandbox");
    }

    @Test
    void aRequiredArgumentMissingOrBlankIsNamed() {
        assertThatThrownBy(() -> args(map()).sandbox()).hasMessage("tool needs 'sandbox'");
        assertThatThrownBy(() -> args(map("s", "  ")).text("s", 10)).hasMessage("tool needs 's'");
    }

    @Test
    void aTextAtItsBoundPassesAndOneCharacterMoreIsRefused() {
        assertThat(args(map("s", "x".repeat(Args.MAX_TEXT))).text("s", Args.MAX_TEXT)).hasSize(Args.MAX_TEXT);
        assertThatThrownBy(() -> args(map("s", "x".repeat(Args.MAX_TEXT + 1))).text("s", Args.MAX_TEXT))
                .hasMessageContaining("4097 characters, more than the 4096");
    }

    @Test
    void wrongTypesAreRefusedSayingWhatTheyMustBe() {
        assertThatThrownBy(() -> args(map("s", 5)).text("s", 10)).hasMessageContaining("must be a string");
        assertThatThrownBy(() -> args(map("n", "5")).number("n", 0, 10, 0)).hasMessageContaining("whole number");
        assertThatThrownBy(() -> args(map("n", 1.5)).number("n", 0, 10, 0)).hasMessageContaining("whole number");
        assertThatThrownBy(() -> args(map("flag", "yes")).flag("flag", false)).hasMessageContaining("true or false");
        assertThatThrownBy(() -> args(map("list", "ls")).texts("list")).hasMessageContaining("array of strings");
        assertThatThrownBy(() -> args(map("s", "a\0b")).text("s", 10)).hasMessageContaining("NUL");
    }

    @Test
    void numbersAreHeldToTheirRangeAndAWholeDoubleIsAWholeNumber() {
        assertThat(args(map("n", 3.0)).number("n", 0, 10, 0)).isEqualTo(3);
        assertThat(args(map()).number("n", 0, 10, 7)).isEqualTo(7);
        assertThat(args(map("n", 10)).number("n", 0, 10, 0)).isEqualTo(10);
        assertThatThrownBy(() -> args(map("n", 11)).number("n", 0, 10, 0)).hasMessageContaining("outside 0..10");
        assertThatThrownBy(() -> args(map("n", -1L)).number("n", 0, 10, 0)).hasMessageContaining("outside 0..10");
    }

    @Test
    void aListAtItsBoundPassesAndOneMoreIsRefused() {
        assertThat(args(map("list", Collections.nCopies(Args.MAX_ITEMS, "a"))).texts("list")).hasSize(Args.MAX_ITEMS);
        assertThatThrownBy(() -> args(map("list", Collections.nCopies(Args.MAX_ITEMS + 1, "a"))).texts("list"))
                .hasMessageContaining("257 items");
        assertThatThrownBy(() -> args(map("list", List.of("a", 1))).texts("list")).hasMessageContaining("strings");
    }

    @Test
    void environmentNamesAreNamesAndValuesStrings() {
        assertThat(args(map("env", Map.of("MY_VAR", "1"))).env("env")).containsEntry("MY_VAR", "1");
        assertThatThrownBy(() -> args(map("env", Map.of("A=B", "1"))).env("env")).hasMessageContaining("A=B");
        assertThatThrownBy(() -> args(map("env", Map.of("A", 1))).env("env")).hasMessageContaining("value for A");
    }

    @Test
    void idsAreCheckedBeforeTheyReachARequestPath() {
        assertThat(args(map("sandbox", "3f2a")).sandbox()).isEqualTo("3f2a");
        assertThatThrownBy(() -> args(map("sandbox", "../v1/shutdown")).sandbox()).hasMessageContaining("not a sandbox id");
        assertThatThrownBy(() -> args(map("sandbox", "0123456789abc")).sandbox()).hasMessageContaining("not a sandbox id");
        assertThat(args(map("process", "p3")).process()).isEqualTo("p3");
        assertThatThrownBy(() -> args(map("process", "3")).process()).hasMessageContaining("not a process id");
    }

    @Test
    void aGuestPathMustBeAbsoluteAndNeverClimbOut() {
        assertThat(args(map("path", "/root/a b/c.txt")).guestPath("path")).isEqualTo("/root/a b/c.txt");
        assertThatThrownBy(() -> args(map("path", "root/x")).guestPath("path")).hasMessageContaining("absolute");
        assertThatThrownBy(() -> args(map("path", "/root/../etc/shadow")).guestPath("path"))
                .hasMessageContaining("'..' segment").hasMessageContaining("escapes");
        assertThatThrownBy(() -> args(map("path", "/root/..")).guestPath("path")).hasMessageContaining("'..'");
        assertThatThrownBy(() -> args(map("path", "/root/./x")).guestPath("path")).hasMessageContaining("'.'");
        assertThat(args(map("path", "/root/..hidden/...")).guestPath("path")).isEqualTo("/root/..hidden/...");
    }

    @Test
    void aGuestPathAtItsBoundPassesAndOneByteMoreIsRefused() {
        String atBound = "/" + "a".repeat(Args.MAX_PATH - 1);
        assertThat(Args.checkGuestPath("t", "path", atBound)).isEqualTo(atBound);
        // é is two bytes in UTF-8: within the characters, past the bytes
        String pastInBytes = "/" + "a".repeat(Args.MAX_PATH - 2) + "é";
        assertThatThrownBy(() -> Args.checkGuestPath("t", "path", pastInBytes)).hasMessageContaining("4096 bytes");
    }

    @Test
    void contentAtItsBoundPassesAndOneByteMoreIsRefusedAsTextAndAsBase64() {
        assertThat(args(map("content", "x".repeat(Args.MAX_CONTENT))).content("content", true)).hasSize(Args.MAX_CONTENT);
        assertThatThrownBy(() -> args(map("content", "x".repeat(Args.MAX_CONTENT + 1))).content("content", true))
                .hasMessageContaining("4194305 bytes, more than the 4194304");
        String b64 = Base64.getEncoder().encodeToString(new byte[Args.MAX_CONTENT + 1]);
        assertThatThrownBy(() -> args(map("content", b64, "encoding", "base64")).content("content", true))
                .hasMessageContaining("more than the 4194304");
        byte[] exact = new byte[Args.MAX_CONTENT];
        assertThat(args(map("content", Base64.getEncoder().encodeToString(exact), "encoding", "base64"))
                .content("content", true)).hasSize(Args.MAX_CONTENT);
    }

    @Test
    void contentIsDecodedAsItsEncodingSays() {
        assertThat(args(map("content", "AAH/", "encoding", "base64")).content("content", true))
                .containsExactly(0, 1, 255);
        assertThat(args(map("content", "é")).content("content", true)).hasSize(2);
        assertThatThrownBy(() -> args(map("content", "!!", "encoding", "base64")).content("content", true))
                .hasMessageContaining("not base64");
        assertThatThrownBy(() -> args(map("content", "x", "encoding", "latin1")).content("content", true))
                .hasMessageContaining("utf-8 or base64");
        assertThatThrownBy(() -> args(map()).content("content", true)).hasMessage("tool needs 'content'");
        assertThat(args(map()).content("content", false)).isEmpty();
    }
}
