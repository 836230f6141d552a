//! `plan_enter` and `plan_exit`: switch the session between the build agent and the plan
//! agent. The switch is recorded as pending and applied when the call ends,
//! publishing `session.agent.switched`; later calls of that session are decided
//! with the new agent's rules (plan: edits only under `plans/` and `drafts/`).

use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::tool::{ToolDef, ToolDoc, ToolOutput};

/// The `plan_enter` tool's definition.
pub fn enter() -> ToolDef {
    ToolDef {
        name: "plan_enter",
        summary: "Switch the session into plan mode",
        description: "Switch the session into plan mode: from the next call on, edits are \
            restricted to plans/* and drafts/*, and shell commands need approval unless every \
            command of the line only reads (ls, cat, grep, git status/log/diff, ...).",
        permission: "plan_enter",
        schema: no_parameters,
        execute: execute_enter,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`Switched to plan mode. Edits are now restricted to plans/* and drafts/*; \
                 shell lines that only read run, others need approval.`",
            errors: "Refused (exit 3) when the policy denies or asks for `plan_enter`.",
            examples: &[(
                "Enter plan mode in session s1",
                "tinytool --session s1 plan_enter",
            )],
        },
    }
}

/// The `plan_exit` tool's definition.
pub fn exit() -> ToolDef {
    ToolDef {
        name: "plan_exit",
        summary: "Switch the session back to build mode",
        description: "Leave plan mode: from the next call on, the session is back in the \
            build agent with full tool access.",
        permission: "plan_exit",
        schema: no_parameters,
        execute: execute_exit,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`Switched to build mode. Full tool access restored.`",
            errors: "Refused (exit 3) outside plan mode unless the policy allows `plan_exit`.",
            examples: &[(
                "Leave plan mode in session s1",
                "tinytool --session s1 plan_exit",
            )],
        },
    }
}

fn no_parameters() -> Value {
    schema::object(json!({}), &[])
}

fn execute_enter(ctx: &CallContext, _: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    switch(ctx, "plan")?;
    Ok(ToolOutput::text(
        "Switched to plan mode. Edits are now restricted to plans/* and drafts/*; \
             shell lines that only read run, others need approval.",
    )
    .with("agent", "plan"))
}

fn execute_exit(ctx: &CallContext, _: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    switch(ctx, "build")?;
    Ok(
        ToolOutput::text("Switched to build mode. Full tool access restored.")
            .with("agent", "build"),
    )
}

/// Records the pending switch and leaves its application for the end of the call.
fn switch(ctx: &CallContext, agent: &str) -> anyhow::Result<()> {
    let session = ctx.session.id.clone();
    ctx.session
        .state
        .write(|store| store.set_pending_agent(&session, agent))?;
    ctx.defer(Box::new(move |ctx: &CallContext| {
        let applied = ctx
            .session
            .state
            .write(|store| store.apply_pending_agent(&session));
        if let Ok(Some((from, to))) = applied {
            let mut props = Map::new();
            props.insert("from".into(), Value::String(from));
            props.insert("agent".into(), Value::String(to));
            ctx.publish("session.agent.switched", props);
        }
    }));
    Ok(())
}
