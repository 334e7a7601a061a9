package dev.kosa8.files;

import dev.kosa8.protocol.FileStat;
import java.util.List;

/**
 * A directory's entries ({@link GuestFiles#list}), directories before their contents.
 *
 * @param entries   each entry's stat, symbolic links not followed
 * @param truncated whether there were more than the listing's bound, which were left out
 */
public record Listing(List<FileStat> entries, boolean truncated) {
    public Listing {
        entries = List.copyOf(entries);
    }
}
