pub struct Spawn;

impl Operation for Spawn {
    const NAME: &'static str = "spawn";
}
