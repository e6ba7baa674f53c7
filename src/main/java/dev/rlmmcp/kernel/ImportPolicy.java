package dev.rlmmcp.kernel;

import java.util.List;

/**
 * Which modules user code may import by name: a guard rail against honest mistakes, never security
 * (print.__self__.__import__('os') walks past any such list; the sandbox is the boundary).
 * An empty {@code allowed} list allows every module that is not {@code blocked}.
 */
public record ImportPolicy(List<String> allowed, List<String> blocked) {

    /** The default guard rail: the modules that reach the system, other processes or the network by name. */
    public static final String DEFAULT_BLOCKED =
            "os,subprocess,socket,shutil,ctypes,multiprocessing,requests,urllib3,http";

    public static final ImportPolicy OFF = new ImportPolicy(List.of(), List.of());

    public ImportPolicy {
        allowed = List.copyOf(allowed);
        blocked = List.copyOf(blocked);
    }
}
