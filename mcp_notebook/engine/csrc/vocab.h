/* Generated from mcp_notebook/protocol/vocab.py by setup.py: do not edit. */
#ifndef MCP_NOTEBOOK_VOCAB_H
#define MCP_NOTEBOOK_VOCAB_H

/* Kind */
enum {
    K_REQUEST = 0,
    K_NOTIFICATION = 1,
    K_RESULT = 2,
    K_ERROR = 3,
    K_INVALID = 4,
    K_STDERR = 5,
    K_LOG = 6,
};

/* Direction */
enum {
    D_C2S = 0,
    D_S2C = 1,
};

/* Outcome */
enum {
    O_RESULT = 0,
    O_ERROR = 1,
    O_TOOL_ERROR = 2,
    O_UNANSWERED = 3,
    O_CANCELLED = 4,
    O_ORPHAN = 5,
    O_DUPLICATE = 6,
};

/* PairFinding */
enum {
    PF_REQUEST_ID_IN_FLIGHT = 0,
    PF_REQUEST_ID_REUSED = 1,
    PF_RESPONSE_AFTER_CANCEL = 2,
    PF_DUPLICATE_RESPONSE = 3,
    PF_ID_TYPE_MISMATCH = 4,
    PF_ORPHAN_RESPONSE = 5,
    PF_CANCEL_INITIALIZE = 6,
    PF_CANCEL_AFTER_RESPONSE = 7,
    PF_CANCEL_UNKNOWN_REQUEST = 8,
    PF_PROGRESS_NOT_INCREASING = 9,
    PF_PROGRESS_AFTER_RESPONSE = 10,
    PF_PROGRESS_UNKNOWN_TOKEN = 11,
};

/* CALL_METHODS */
#define N_CALL_METHODS 7
static const char *const CALL_METHODS[N_CALL_METHODS] = {
    "tools/call",
    "prompts/get",
    "resources/read",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
};

/* LISTED */
#define N_LISTED 4
static const char *const LISTED[N_LISTED] = {
    "tools",
    "prompts",
    "resources",
    "resourceTemplates",
};

#endif
