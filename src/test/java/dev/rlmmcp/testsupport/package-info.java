/**
 * Helpers for tests of any layer, unit and end-to-end alike: a local S3 server, the plain S3 read the
 * benchmark compares the server's reads with, a Unix socket listener, and the JUnit extension that fails a
 * test class leaving processes behind. Only the plain S3 read uses production classes (the data layer's S3
 * settings and client, as the server does).
 */
package dev.rlmmcp.testsupport;
