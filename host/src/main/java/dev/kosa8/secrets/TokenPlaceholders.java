package dev.kosa8.secrets;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.random.RandomGenerator;

/**
 * The placeholder a guest holds for an OAuth token the broker keeps: the
 * token's shape with none of its secret material, because clients look at
 * their tokens (Codex reads its account from the id_token's claims, clients
 * check prefixes such as {@code sk-ant-oat01-}).
 *
 * <ul>
 * <li>A JWT ({@code header.payload.signature}, the header base64url JSON)
 * keeps its header and payload and gets a random signature of the same
 * length: the claims stay readable, as the guest's client expects, and
 * without its signature the token is worth nothing to any server.</li>
 * <li>Any other token keeps its vendor prefix ({@link Sentinels}) and every
 * character that is not a letter or digit ({@code .}, {@code -}, {@code /}...)
 * where it was; each letter and digit is drawn anew.</li>
 * </ul>
 * Either way the placeholder has the token's length (responses keep their
 * lengths) and differs from it.
 */
public final class TokenPlaceholders {
    private static final String ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final String BASE64URL = ALNUM + "-_";

    private TokenPlaceholders() {
    }

    /**
     * A placeholder for {@code token}.
     *
     * @throws IllegalArgumentException when the token has nothing to replace (no letter or digit past its prefix)
     */
    public static String mint(String token, RandomGenerator rng) {
        int sig = jwtSignatureStart(token);
        char[] out = token.toCharArray();
        if (sig >= 0) {
            if (sig == token.length()) {
                throw new IllegalArgumentException("an unsigned JWT has no secret to keep");
            }
            do {
                for (int i = sig; i < out.length; i++) {
                    out[i] = BASE64URL.charAt(rng.nextInt(BASE64URL.length()));
                }
            } while (new String(out).equals(token));
            return new String(out);
        }
        int from = Sentinels.prefixLength(token);
        boolean any = false;
        for (int i = from; i < out.length; i++) {
            any |= isAlnum(out[i]);
        }
        if (!any) {
            throw new IllegalArgumentException("a token without letters or digits past its prefix");
        }
        do {
            for (int i = from; i < out.length; i++) {
                if (isAlnum(token.charAt(i))) {
                    out[i] = ALNUM.charAt(rng.nextInt(ALNUM.length()));
                }
            }
        } while (new String(out).equals(token));
        return new String(out);
    }

    /** Where a JWT's signature starts, or -1 when {@code token} is not a JWT with a JSON header. */
    static int jwtSignatureStart(String token) {
        int a = token.indexOf('.');
        int b = a < 0 ? -1 : token.indexOf('.', a + 1);
        if (a <= 0 || b < 0 || token.indexOf('.', b + 1) >= 0) {
            return -1;
        }
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c != '.' && BASE64URL.indexOf(c) < 0) {
                return -1;
            }
        }
        try {
            String header = new String(Base64.getUrlDecoder().decode(token.substring(0, a)), StandardCharsets.UTF_8);
            return header.strip().startsWith("{") ? b + 1 : -1;
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    private static boolean isAlnum(char c) {
        return c < 128 && ALNUM.indexOf(c) >= 0;
    }
}
