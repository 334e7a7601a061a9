package dev.kosa8.vm;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The guest's one network device: QEMU user networking with
 * {@code restrict=on}, whose only ways out are {@code guestfwd} entries, one
 * per broker listener. Each guest connection to {@link #GUEST_ADDRESS}:port
 * makes slirp start {@code relay - UNIX-CONNECT:socket} (socat), which joins
 * it to the broker's unix socket for that port (slirp spawns the command anew
 * for every connection to a {@code cmd:} guestfwd).
 *
 * @param relay    absolute path of the socat binary, so the daemon's PATH cannot swap it
 * @param forwards guest port to the broker's unix socket
 */
public record GuestNetwork(Path relay, Map<Integer, Path> forwards) {
    /** Where the broker answers inside the guest; mirrors {@code egress.Listener.GUEST_ADDRESS}. */
    public static final String GUEST_ADDRESS = "10.0.2.100";
    /** The guest's own address, set statically by its init (no DHCP). */
    public static final String GUEST_IP = "10.0.2.15";

    public GuestNetwork {
        if (!relay.isAbsolute()) {
            throw new IllegalArgumentException("the relay program must be an absolute path: " + relay);
        }
        forwards = java.util.Collections.unmodifiableMap(new TreeMap<>(forwards)); // sorted: the argv is deterministic
    }
}
