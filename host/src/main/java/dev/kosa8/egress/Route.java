package dev.kosa8.egress;

import io.netty.channel.Channel;

/** What {@link TlsRouter} decided for a TLS connection it may carry. */
sealed interface Route {
    /** Relay the bytes untouched to this connected upstream. */
    record Pass(Channel upstream) implements Route {
    }

    /** Terminate TLS with the sandbox CA's leaf for the name and read the requests inside. */
    record Intercept() implements Route {
    }
}
