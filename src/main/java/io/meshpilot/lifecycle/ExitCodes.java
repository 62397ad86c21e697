package io.meshpilot.lifecycle;

/** Process exit codes of pilot-discovery. */
public final class ExitCodes {
    public static final int OK = 0;
    /** A component could not start, or a request failed. */
    public static final int FAILURE = 1;
    /** Bad flags or env values. */
    public static final int USAGE = 2;
    /** Second SIGTERM: stopped without draining (128 + 15, as a signal death). */
    public static final int FORCED = 143;

    private ExitCodes() {
    }
}
