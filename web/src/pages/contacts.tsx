export default function Page() { return <p>contacts</p>; }
