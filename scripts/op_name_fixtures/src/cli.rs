// A comment may say "spawn".
fn plan() {
    client.call("spawn", json!({"spawn": 1}));
    let field = params.get("spawn");
    let word = "spawn"; // not an operation
}

#[cfg(test)]
mod tests {
    fn names_it() {
        call("spawn");
    }
}
