package io.meshpilot.config.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads a file as UTF-8 text; bytes that are not UTF-8 are an error naming their offset. */
final class Utf8Text {
    /** The file is not UTF-8: the message names the byte offset of the first bad byte. */
    static final class Invalid extends IOException {
        Invalid(String message) {
            super(message);
        }
    }

    private Utf8Text() {
    }

    static String read(Path path) throws IOException {
        ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(path));
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        CharBuffer out = CharBuffer.allocate(in.remaining());
        CoderResult r = decoder.decode(in, out, true);
        if (r.isError()) {
            throw new Invalid("invalid UTF-8 at byte " + in.position());
        }
        r = decoder.flush(out);
        if (r.isError()) {
            throw new Invalid("invalid UTF-8 at byte " + in.position());
        }
        return out.flip().toString();
    }
}
