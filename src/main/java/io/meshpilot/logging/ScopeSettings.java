package io.meshpilot.logging;

/**
 * What one scope writes, changeable at run time (ControlZ).
 *
 * @param outputLevel     the least severe level written
 * @param stackTraceLevel from this level on, a line carries the stack of its log call
 * @param logCallers      lines carry the caller's file and line
 */
public record ScopeSettings(LogLevel outputLevel, LogLevel stackTraceLevel, boolean logCallers) {
}
