/**
 * What outlives the server, in one state directory: {@link dev.rlmmcp.store.StateStore} holds the SQLite
 * session database ({@link dev.rlmmcp.store.SessionDatabase}: sessions, limits, state, trace) and the variable
 * snapshots ({@link dev.rlmmcp.store.SnapshotStore}: a local directory, or one mirrored to S3 so that another
 * node can resume a session); {@link dev.rlmmcp.store.StateDirectoryLock} keeps a second server off the same
 * directory. A sibling of kernel, data, llm and bridge: it may use {@code dev.rlmmcp.base} and
 * {@code dev.rlmmcp.data} (whose S3 client the S3 mirror is built on).
 */
package dev.rlmmcp.store;
