/**
 * What `import … from "@base-context/plugin-sdk"` gives a plugin running in the daemon (the
 * loader hooks map that specifier here): the SDK's runtime surface minus the test harness. The
 * names come from one list, `@base-context/core/plugin-api`, which the SDK package re-exports
 * too, so plugins summarize with exactly the daemon's rules and a plugin folder needs no
 * node_modules to run. A test in packages/plugin-sdk checks that the two surfaces agree.
 */
export * from "@base-context/core/plugin-api";
