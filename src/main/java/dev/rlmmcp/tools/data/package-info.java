/**
 * The tools that move data between S3 or a URL and a session (or S3): list buckets and objects,
 * load into a variable, upload from a URL ({@link dev.rlmmcp.tools.data.LoadS3Tool} and its
 * siblings). They use the tools package, core and data.
 */
package dev.rlmmcp.tools.data;
