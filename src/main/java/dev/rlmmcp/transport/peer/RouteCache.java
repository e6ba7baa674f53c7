package dev.rlmmcp.transport.peer;

import dev.rlmmcp.cluster.Router;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The peers that served sessions lately, so that forwarding a session's next request asks the cluster
 * database nothing. A stale entry is harmless: the peer it names serves only what it owns and answers 409
 * naming the owner otherwise, or does not answer, or says it is not serving; each of those forgets the entry.
 * Only remote routes are kept: whether this node serves a session is the router's to say every time (it holds
 * the session's epoch in memory, which costs nothing to ask).
 */
public final class RouteCache {

    private static final int MAX_ENTRIES = 10_000;

    private final Router router;
    private final Map<RouteKey, Router.Remote> remotes = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<RouteKey, Router.Remote> eldest) {
            return size() > MAX_ENTRIES;
        }
    };

    public RouteCache(Router router) {
        this.router = router;
    }

    /** Where {@code key} routes: the peer that served it lately, else as the router says now. */
    public Router.Route route(RouteKey key) {
        if (!cached(key)) {
            return key.route(router);
        }
        synchronized (remotes) {
            Router.Remote remote = remotes.get(key);
            if (remote != null) {
                return remote;
            }
        }
        return fresh(key);
    }

    /** Where {@code key} routes as the router says now (the cache updated). */
    public Router.Route fresh(RouteKey key) {
        Router.Route route = key.route(router);
        if (cached(key)) {
            synchronized (remotes) {
                if (route instanceof Router.Remote remote) {
                    remotes.put(key, remote);
                } else {
                    remotes.remove(key);
                }
            }
        }
        return route;
    }

    /**
     * Whether the router names a node at {@code owner}'s address for {@code key} still (a node restarted there has a
     * new id, and may be the one running the request); true if it cannot tell now.
     */
    public boolean stillNames(RouteKey key, Router.Remote owner) {
        try {
            return key.peek(router) instanceof Router.Remote now
                    && now.address().equals(owner.address());
        } catch (RuntimeException e) {
            return true; // the cluster database did not answer: the owner's lease is not known to have run out
        }
    }

    /** Remembers the peer that served {@code key} just now. */
    public void remember(RouteKey key, Router.Remote owner) {
        if (cached(key)) {
            synchronized (remotes) {
                remotes.put(key, owner);
            }
        }
    }

    /** Forgets the peer {@code key} was routed to: it moved the session, did not answer, or is not serving. */
    public void forget(RouteKey key) {
        synchronized (remotes) {
            remotes.remove(key);
        }
    }

    /** Sessions and MCP sessions stay with their node; a node named by a task id is known without asking. */
    private static boolean cached(RouteKey key) {
        return key instanceof RouteKey.Session || key instanceof RouteKey.McpSession;
    }
}
