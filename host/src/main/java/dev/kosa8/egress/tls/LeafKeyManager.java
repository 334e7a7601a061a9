package dev.kosa8.egress.tls;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * Hands a TLS server one key and its chain, straight from memory.
 *
 * <p>{@code SslContextBuilder.forServer(key, chain...)} would first put them in a
 * password-protected PKCS#12 key store and read them back, which costs about 20 ms
 * of key derivation per context, per host name. This costs nothing.
 */
final class LeafKeyManager extends X509ExtendedKeyManager {
    private static final String ALIAS = "leaf";
    private final PrivateKey key;
    private final X509Certificate[] chain;

    LeafKeyManager(PrivateKey key, X509Certificate... chain) {
        this.key = key;
        this.chain = chain.clone();
    }

    private String aliasFor(String keyType) {
        return key.getAlgorithm().equals(keyType) ? ALIAS : null;
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return aliasFor(keyType);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return aliasFor(keyType);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return aliasFor(keyType) == null ? null : new String[] {ALIAS};
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return ALIAS.equals(alias) ? chain.clone() : null;
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return ALIAS.equals(alias) ? key : null;
    }

    /** A server never authenticates itself as a client. */
    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return null;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return null;
    }
}
