/**
 * The annotation a restore puts on every Declaration it re-issues (`<backup name> rv <resourceVersion>`): the
 * agent names it when it takes a re-issued declaration that goes back from what it held. Its own file so the
 * agent imports the name without the restore code.
 */

/** The annotation key (see the file comment). */
export const RESTORED_FROM = 'meshctl.dev/restored-from';
