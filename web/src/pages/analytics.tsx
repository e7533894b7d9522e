export default function Page() { return <p>analytics</p>; }
