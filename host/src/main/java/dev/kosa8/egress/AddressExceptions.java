package dev.kosa8.egress;

import java.net.InetAddress;
import java.util.List;
import java.util.Optional;

/** The user's address exceptions ({@link AddressException}), as data the policy is given. */
public record AddressExceptions(List<AddressException> all) {
    public static final AddressExceptions NONE = new AddressExceptions(List.of());

    public AddressExceptions {
        all = List.copyOf(all);
    }

    /** Which exception, and which of its blocks, lets {@code name} be dialed at {@code a}; empty for none. */
    public Optional<Match> covering(String name, InetAddress a) {
        for (AddressException e : all) {
            Optional<AddressRange> r = e.covering(name, a);
            if (r.isPresent()) {
                return Optional.of(new Match(e, r.get()));
            }
        }
        return Optional.empty();
    }

    /** An exception that applied, and the block the address was in. */
    public record Match(AddressException exception, AddressRange range) {
    }
}
